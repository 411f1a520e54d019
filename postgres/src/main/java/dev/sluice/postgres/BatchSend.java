package dev.sluice.postgres;

import dev.sluice.postgres.JdbcAttempt.Db;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link Batcher} sends a batch: one attempt (retries and budget as for a single decision, the earliest deadline
 * of the batch) of one statement: for token-bucket / GCRA requests ({@link #buckets})
 * {@code sluice_bucket_acquire_many} ({@code sluice_bucket_batch} when a reservation's estimate or settle is in it),
 * for work in flight {@code sluice_in_flight_many} ({@link InFlightStatements}), or the single call for a batch of
 * one. A request whose caller stopped waiting before the batch was sent is left out (it was told so), and gets
 * {@code null}.
 */
final class BatchSend<R extends Batcher.Queued> implements Batcher.Sender<R> {

    /** The statement of a batch: the answers of {@code live} (at least one request), in their order. */
    interface Statement<R> {
        List<?> send(Db c, List<R> live) throws SQLException;
    }

    private final AttemptLoop attempts;
    private final Statement<R> statement;

    BatchSend(AttemptLoop attempts, Statement<R> statement) {
        this.attempts = attempts;
        this.statement = statement;
    }

    /** The token-bucket and GCRA decisions, estimates and settles: see the class comment. */
    static BatchSend<Batcher.Request> buckets(
            AttemptLoop attempts, DecisionStatements statements, SettleStatements settles) {
        return new BatchSend<>(
                attempts,
                (c, live) -> live.size() == 1
                        ? List.of(one(c, live.get(0), statements, settles))
                        : live.stream().allMatch(r -> r.reservation() == null)
                                ? statements.acquireMany(c, live)
                                : settles.bucketBatch(c, live, statements));
    }

    @Override
    public List<@Nullable Object> send(List<R> batch) {
        R first = batch.get(0);
        long deadline = first.call().deadlineNanos;
        for (R r : batch) {
            deadline = r.call().deadlineNanos - deadline < 0 ? r.call().deadlineNanos : deadline;
        }
        List<@Nullable Object> out = attempts.run(first.key(), first.limit(), new BatchCall(deadline, batch), c -> {
            List<R> live = new ArrayList<>(batch.size());
            for (R r : batch) {
                if (!r.call().abandoned) {
                    live.add(r);
                }
            }
            if (live.isEmpty()) {
                return Collections.<@Nullable Object>nCopies(batch.size(), null);
            }
            List<@Nullable Object> sent = Collections.unmodifiableList(statement.send(c, live));
            if (live.size() == batch.size()) {
                return sent;
            }
            List<@Nullable Object> all = new ArrayList<>(batch.size());
            int next = 0;
            for (R r : batch) {
                all.add(live.contains(r) ? sent.get(next++) : null);
            }
            return all;
        });
        attempts.decisions.add(batch.size() - 1L); // the attempt counted the batch as one decision
        return out;
    }

    /** A batch of one: the request's own statement. */
    private static Object one(Db c, Batcher.Request r, DecisionStatements statements, SettleStatements settles)
            throws SQLException {
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
