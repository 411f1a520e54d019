package dev.sluice.postgres;

import java.util.List;

/** The phases of a batch are those of every request in it. */
final class BatchCall extends DecisionCall {
    private final List<Batcher.Request> batch;

    BatchCall(long deadlineNanos, List<Batcher.Request> batch) {
        super(deadlineNanos);
        this.batch = batch;
        for (Batcher.Request r : batch) {
            r.call().inBatch =
                    this; // a caller who stops waiting cancels this call's statement (see DecisionCall.cancel)
        }
    }

    @Override
    void enter(int p) {
        super.enter(p);
        for (Batcher.Request r : batch) {
            r.call().enter(p);
        }
    }

    @Override
    void sent(long deadline) {
        super.sent(deadline);
        for (Batcher.Request r : batch) {
            r.call().sent(deadline);
        }
    }

    @Override
    boolean allAbandoned() {
        for (Batcher.Request r : batch) {
            if (!r.call().abandoned) {
                return false;
            }
        }
        return true;
    }

    @Override
    void sentLimit(long limit) {
        super.sentLimit(limit);
        for (Batcher.Request r : batch) {
            r.call().sentLimit(limit);
        }
    }
}
