package dev.sluice.postgres;

import dev.sluice.postgres.JdbcAttempt.Db;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How the {@link Batcher} sends a batch: one attempt (retries and budget as for a single decision, the earliest
 * deadline of the batch) of one statement, {@code sluice_bucket_acquire_many} ({@code sluice_bucket_batch} when a
 * reservation's estimate or settle is in it), or the single call for a batch of one. A request whose caller stopped waiting before the batch was sent is left out (it was told so), and gets
 * {@code null}.
 */
final class BatchSend implements Batcher.Sender {
    private final AttemptLoop attempts;
    private final DecisionStatements statements;
    private final SettleStatements settles;

    BatchSend(AttemptLoop attempts, DecisionStatements statements, SettleStatements settles) {
        this.attempts = attempts;
        this.statements = statements;
        this.settles = settles;
    }

    @Override
    public List<@Nullable Object> send(List<Batcher.Request> batch) {
        Batcher.Request first = batch.get(0);
        long deadline = first.call().deadlineNanos;
        for (Batcher.Request r : batch) {
            deadline = r.call().deadlineNanos - deadline < 0 ? r.call().deadlineNanos : deadline;
        }
        List<@Nullable Object> out = attempts.run(first.key(), first.limit(), new BatchCall(deadline, batch), c -> {
            List<Batcher.Request> live = new ArrayList<>(batch.size());
            for (Batcher.Request r : batch) {
                if (!r.call().abandoned) {
                    live.add(r);
                }
            }
            if (live.isEmpty()) {
                return Collections.<@Nullable Object>nCopies(batch.size(), null);
            }
            List<@Nullable Object> sent = Collections.unmodifiableList(
                    live.size() == 1
                            ? List.of(one(c, live.get(0)))
                            : live.stream().allMatch(r -> r.reservation() == null)
                                    ? statements.acquireMany(c, live)
                                    : settles.bucketBatch(c, live, statements));
            if (live.size() == batch.size()) {
                return sent;
            }
            List<@Nullable Object> all = new ArrayList<>(batch.size());
            int next = 0;
            for (Batcher.Request r : batch) {
                all.add(live.contains(r) ? sent.get(next++) : null);
            }
            return all;
        });
        attempts.decisions.add(batch.size() - 1L); // the attempt counted the batch as one decision
        return out;
    }

    /** A batch of one: the request's own statement. */
    private Object one(Db c, Batcher.Request r) throws SQLException {
        Batcher.Reservation reservation = r.reservation();
        if (reservation == null) {
            return statements.acquire(c, r.key(), r.limit(), r.cost(), r.maxWaitNanos(), r.now());
        }
        return reservation.settle()
                ? settles.settle(c, r.key(), r.limit(), reservation.id(), r.cost(), r.now())
                : SettleStatements.estimate(
                        c,
                        statements,
                        r.key(),
                        r.limit(),
                        r.cost(),
                        reservation.id(),
                        reservation.withinNanos(),
                        r.now());
    }
}
