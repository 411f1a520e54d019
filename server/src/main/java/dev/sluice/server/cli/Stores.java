package dev.sluice.server.cli;

import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;

/**
 * Opens the store named by {@code --store}. This build has the in-memory store; the Redis and PostgreSQL stores
 * are separate modules, and a URI naming one of them is refused with a message saying so rather than silently
 * falling back to memory (which would split a fleet's limits per instance).
 */
final class Stores {
    private Stores() {
    }

    /** An opened store, its display name, and whether its calls block on I/O. */
    record Opened(RateLimiter limiter, String name, boolean blocking) {
    }

    static Opened open(String spec, int maxKeys) {
        String s = spec == null ? "memory" : spec.trim();
        if (s.equals("memory") || s.startsWith("memory:")) {
            return new Opened(InMemoryRateLimiter.builder().maxKeys(maxKeys).build(), "memory", false);
        }
        String kind = kind(s);
        if (kind != null) {
            throw new IllegalArgumentException("store " + kind + " is not available in this build: only 'memory' is."
                    + " Run with --store memory (the default), or a build that includes sluice-" + kind);
        }
        throw new IllegalArgumentException("unknown store '" + spec + "': use memory, redis://host:6379 or "
                + "postgresql://user@host/db");
    }

    /** {@code redis} or {@code postgres} for a URI of theirs, else null. */
    static String kind(String s) {
        if (s.startsWith("redis://") || s.startsWith("rediss://") || s.startsWith("redis-sentinel://")) {
            return "redis";
        }
        if (s.startsWith("postgresql://") || s.startsWith("postgres://") || s.startsWith("jdbc:postgresql:")) {
            return "postgres";
        }
        return null;
    }
}
