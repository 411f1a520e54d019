package dev.sluice.redis;

import dev.sluice.Degradation;
import dev.sluice.StoreException;

/**
 * Redis could not decide: it did not answer within the time budget ({@link Degradation#TIMEOUT}), could
 * not be reached — refused, reset, not connected, name not resolved ({@link Degradation#UNAVAILABLE}) — or
 * answered with an error, such as a key holding a value Sluice did not write or a script error
 * ({@link Degradation#STORE_ERROR}). The message names the Redis address or key and what to do.
 */
public class RedisStoreException extends StoreException {
    private static final long serialVersionUID = 1L;

    public RedisStoreException(String message, Throwable cause, Degradation degradation) {
        super(message, cause, degradation);
    }

    public RedisStoreException(String message, Degradation degradation) {
        super(message, null, degradation);
    }
}
