package dev.sluice.redis;

/**
 * Redis could not decide: it is down, did not answer within the command timeout, or a key holds a
 * value Sluice did not write. The message names the Redis address or key and what to do.
 */
public class RedisStoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RedisStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    public RedisStoreException(String message) {
        super(message);
    }
}
