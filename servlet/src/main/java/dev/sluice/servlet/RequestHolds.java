package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * What one request holds while it runs, to give back when its response ends: slots of work in flight, and
 * reservations of costs known afterwards.
 *
 * <p>One random UUID per request is both its reservation id and its slot holder id (the two live apart in every
 * store). The request's response ends when the filter chain returns, or, for a request gone asynchronous (a
 * streamed response), when its {@link jakarta.servlet.AsyncContext} completes, fails or times out: this object is
 * then its {@link AsyncListener}. {@link #finish} runs once whichever comes: it releases every slot and settles every
 * reservation on the actual cost the application reported (or at the estimate when it reported none). A release or
 * settle that fails is logged and left to the store: the slot's lease ends, the reservation settles at its estimate
 * after its {@code settleWithin}.
 */
final class RequestHolds implements AsyncListener {
    private final RateLimiter limiter;
    private final String id = UUID.randomUUID().toString();
    private final BiConsumer<String, RuntimeException> warn;
    private final List<AppliedRules.Slot> slots = new ArrayList<>(1);
    private final List<AppliedRules.Estimate> reserved = new ArrayList<>(1);
    private final AtomicBoolean finished = new AtomicBoolean();
    /** As the filter saw them: the application sets the actual cost on them or on what they wrap. */
    private final HttpServletRequest request;

    private final HttpServletResponse response;

    /** @param warn logs a failure of the limiter (rate-limited by the filter) */
    RequestHolds(
            RateLimiter limiter,
            HttpServletRequest request,
            HttpServletResponse response,
            BiConsumer<String, RuntimeException> warn) {
        this.limiter = limiter;
        this.request = request;
        this.response = response;
        this.warn = warn;
    }

    /**
     * Takes a slot of {@code slot}'s key; holds it when allowed. Throws what the store throws (the filter lets the
     * request through without the slot, as with any failure of the limiter).
     */
    Decision take(AppliedRules.Slot slot) {
        Decision d = limiter.inFlight().tryAcquire(slot.key(), slot.max(), id, slot.lease());
        if (d.allowed()) {
            slots.add(slot);
        }
        return d;
    }

    /** Reserves {@code e}'s estimate; holds the reservation when allowed. Throws what the store throws. */
    Decision reserve(AppliedRules.Estimate e) {
        Decision d = limiter.tryAcquireEstimate(
                e.key(), e.limit(), e.estimate(), id, e.after().settleWithin());
        if (d.allowed()) {
            reserved.add(e);
        }
        return d;
    }

    /** Gives back everything taken: the request is denied by a later step (or never goes on). */
    void undo() {
        if (finished.compareAndSet(false, true)) {
            release();
            for (AppliedRules.Estimate e : reserved) {
                settle(e, 0);
            }
        }
    }

    /** The response has ended: releases the slots and settles the reservations on the actual costs. Once. */
    void finish() {
        if (finished.compareAndSet(false, true)) {
            release();
            for (AppliedRules.Estimate e : reserved) {
                long actual = e.after().actual(request, response);
                if (actual < 0) {
                    actual = e.estimate(); // none reported: the estimate stands, nothing left pending
                }
                settle(e, Math.min(actual, e.limit().capacity()));
            }
        }
    }

    private void release() {
        for (AppliedRules.Slot s : slots) {
            try {
                limiter.inFlight().release(s.key(), id);
            } catch (RuntimeException ex) {
                warn.accept(
                        "releasing the in-flight slot of rule '" + s.rule() + "' failed; its lease of " + s.lease()
                                + " frees it",
                        ex);
            }
        }
    }

    private void settle(AppliedRules.Estimate e, long actual) {
        try {
            limiter.settle(e.key(), e.limit(), id, actual);
        } catch (RuntimeException ex) {
            warn.accept(
                    "settling the cost of limit '" + e.limit().name() + "' at " + actual + " failed; its estimate "
                            + e.estimate() + " stands",
                    ex);
        }
    }

    @Override
    public void onComplete(AsyncEvent event) {
        finish();
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        finish();
    }

    @Override
    public void onError(AsyncEvent event) {
        finish();
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // a new asynchronous cycle of the same request: keep listening to it
        event.getAsyncContext().addListener(this);
    }
}
