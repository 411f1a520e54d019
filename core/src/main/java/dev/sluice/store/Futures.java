package dev.sluice.store;

import dev.sluice.Degradation;
import dev.sluice.StoreException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The synchronous view of an asynchronous operation whose future is already bounded (a wrapper's future over a
 * store's, which the store fails at its time budget): waits for it and throws what it failed with, unwrapped.
 */
public final class Futures {
    private Futures() {}

    /**
     * The value of {@code f}, waiting for it; its failure thrown as it was raised (a {@link RuntimeException} or
     * {@link Error}; anything else as a {@link StoreException} of {@link Degradation#STORE_ERROR}). An interrupt while
     * waiting is a {@link StoreException} of {@link Degradation#STORE_ERROR}, the thread's interrupt status kept.
     */
    public static <T> T join(CompletableFuture<T> f) {
        if (!f.isDone()) {
            Burst.endNow(); // a decision this thread's burst holds would otherwise wait for this wait to end
        }
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while waiting for the store", e, Degradation.STORE_ERROR);
        } catch (ExecutionException e) {
            throw unchecked(e.getCause() != null ? e.getCause() : e);
        }
    }

    /** The failure of a future as the synchronous call throws it: unwrapped from the JDK's wrappers. */
    public static RuntimeException unchecked(Throwable failure) {
        Throwable c = unwrap(failure);
        if (c instanceof RuntimeException r) {
            return r;
        }
        if (c instanceof Error err) {
            throw err;
        }
        return new StoreException(String.valueOf(c.getMessage()), c, Degradation.STORE_ERROR);
    }

    /** {@code e} without the {@link CompletionException} and {@link ExecutionException} wrappers around it. */
    public static Throwable unwrap(Throwable e) {
        Throwable c = e;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }
}
