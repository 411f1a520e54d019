package dev.sluice;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/** One part of a multi-permit request: spend {@code cost} permits of {@code limit} on {@code key}. */
public record Permit(String key, Limit limit, long cost) {

    /** Keys are 1 to 4096 characters. */
    public static final int MAX_KEY_LENGTH = 4096;

    public Permit {
        check(key, limit, cost);
    }

    public static Permit of(String key, Limit limit, long cost) {
        return new Permit(key, limit, cost);
    }

    public static Permit of(String key, Limit limit) {
        return new Permit(key, limit, 1);
    }

    /**
     * Validates a request without allocating; every store calls it before touching state.
     *
     * @throws IllegalArgumentException naming the bad value and the fix
     * @throws NullPointerException when {@code key} or {@code limit} is null
     */
    public static void check(String key, Limit limit, long cost) {
        checkKeyAndLimit(key, limit);
        limit.checkCost(cost);
    }

    /**
     * Validates the key and limit of a call that takes no cost ({@code reset}, {@code bind}), with the same messages
     * as {@link #check}; every store calls it before touching state.
     *
     * @throws IllegalArgumentException for an empty or over-long key
     * @throws NullPointerException when {@code key} or {@code limit} is null
     */
    public static void checkKeyAndLimit(String key, Limit limit) {
        checkKey(key);
        Objects.requireNonNull(limit, "limit must not be null: e.g. Limit.tokenBucket(10, Rate.perSecond(1))");
    }

    /**
     * Validates a multi-permit request: a list of at least one permit, none null. Each permit was checked when it
     * was built; every store and wrapper calls this before anything else.
     *
     * @throws IllegalArgumentException for an empty list
     * @throws NullPointerException for a null list or a null permit, naming its index
     */
    public static void checkAll(List<Permit> permits) {
        Objects.requireNonNull(permits, "permits must not be null: give a list of at least one Permit");
        int n = permits.size();
        if (n == 0) {
            throw new IllegalArgumentException("permits is empty: give at least one Permit");
        }
        for (int i = 0; i < n; i++) {
            if (permits.get(i) == null) {
                throw new NullPointerException("permits[" + i + "] is null: every element must be a Permit");
            }
        }
    }

    /**
     * {@code prefix + value} as a key, or {@code prefix + "sha256:" + }the hex SHA-256 of {@code value}'s UTF-8 when
     * that would be longer than {@value #MAX_KEY_LENGTH}: a key for a caller's value of any length (a header, an
     * expression's result), distinct values staying distinct. The integrations build their keys with it.
     */
    public static String boundedKey(String prefix, String value) {
        if (prefix.length() + value.length() <= MAX_KEY_LENGTH) {
            return prefix + value;
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
            return prefix + "sha256:" + HexFormat.of().formatHex(h);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** How a key appears in a message: its first 64 characters, then "…". */
    public static String abbreviate(String key) {
        return key.length() <= 64 ? key : key.substring(0, 64) + "…";
    }

    /** Keys must be 1 to {@value #MAX_KEY_LENGTH} characters. */
    public static void checkKey(String key) {
        if (key == null) {
            throw new NullPointerException("key must not be null: use a non-empty string such as \"user:42\"");
        }
        int n = key.length();
        if (n == 0) {
            throw new IllegalArgumentException(
                    "key \"\" is empty: use 1 to " + MAX_KEY_LENGTH + " characters, such as \"user:42\"");
        }
        if (n > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key of " + n + " characters (starting \"" + key.substring(0, 32)
                    + "…\") is longer than " + MAX_KEY_LENGTH + ": shorten it or hash it first");
        }
    }
}
