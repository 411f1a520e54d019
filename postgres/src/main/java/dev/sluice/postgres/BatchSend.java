package dev.sluice.postgres;

import dev.sluice.Decision;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How the {@link Batcher} sends a batch: one attempt (retries and budget as for a single decision, the earliest
 * deadline of the batch) of one statement, {@code sluice_bucket_acquire_many}, or the single call for a batch of
 * one. A request whose caller stopped waiting before the batch was sent is left out (it was told so), and gets
 * {@code null}.
 */
final class BatchSend implements Batcher.Sender {
    private final AttemptLoop attempts;
    private final DecisionStatements statements;

    BatchSend(AttemptLoop attempts, DecisionStatements statements) {
        this.attempts = attempts;
        this.statements = statements;
    }

    @Override
    public List<@Nullable Decision> send(List<Batcher.Request> batch) {
        Batcher.Request first = batch.get(0);
        long deadline = first.call().deadlineNanos;
        for (Batcher.Request r : batch) {
            deadline = r.call().deadlineNanos - deadline < 0 ? r.call().deadlineNanos : deadline;
        }
        List<@Nullable Decision> out = attempts.run(first.key(), first.limit(), new BatchCall(deadline, batch), c -> {
            List<Batcher.Request> live = new ArrayList<>(batch.size());
            for (Batcher.Request r : batch) {
                if (!r.call().abandoned) {
                    live.add(r);
                }
            }
            if (live.isEmpty()) {
                return Collections.<@Nullable Decision>nCopies(batch.size(), null);
            }
            Batcher.Request one = live.get(0);
            List<Decision> sent = live.size() == 1
                    ? List.of(statements.acquire(c, one.key(), one.limit(), one.cost(), one.maxWaitNanos(), one.now()))
                    : statements.acquireMany(c, live);
            if (live.size() == batch.size()) {
                return sent;
            }
            List<@Nullable Decision> all = new ArrayList<>(batch.size());
            int next = 0;
            for (Batcher.Request r : batch) {
                all.add(live.contains(r) ? sent.get(next++) : null);
            }
            return all;
        });
        attempts.decisions.add(batch.size() - 1L); // the attempt counted the batch as one decision
        return out;
    }
}
