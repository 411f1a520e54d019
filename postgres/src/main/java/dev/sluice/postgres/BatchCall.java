package dev.sluice.postgres;

import java.util.List;

/** The phases of a batch are those of every request in it. */
final class BatchCall extends DecisionCall {
    private final List<? extends Batcher.Queued> batch;

    BatchCall(long deadlineNanos, List<? extends Batcher.Queued> batch) {
        super(deadlineNanos);
        this.batch = batch;
        for (Batcher.Queued r : batch) {
            r.call().inBatch =
                    this; // a caller who stops waiting cancels this call's statement (see DecisionCall.cancel)
        }
    }

    @Override
    void enter(int p) {
        super.enter(p);
        for (Batcher.Queued r : batch) {
            r.call().enter(p);
        }
    }

    @Override
    void sent(long deadline) {
        super.sent(deadline);
        for (Batcher.Queued r : batch) {
            r.call().sent(deadline);
        }
    }

    @Override
    boolean allAbandoned() {
        for (Batcher.Queued r : batch) {
            if (!r.call().abandoned) {
                return false;
            }
        }
        return true;
    }

    @Override
    void sentLimit(long limit) {
        super.sentLimit(limit);
        for (Batcher.Queued r : batch) {
            r.call().sentLimit(limit);
        }
    }
}
