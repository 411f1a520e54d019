package dev.sluice.spring;

import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import java.util.Locale;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * Opens the store {@code sluice.store} names. Remote stores are opened on a background thread by
 * {@link FailSafeRateLimiter}, so the application starts while Redis or the database is down, and their failures
 * are decided by {@code sluice.failure-policy}; each call waits at most the store's budget ({@code sluice.budget}).
 * A store that refuses the configuration (a wrong password, an unknown host, another server at that port) fails
 * the start with its own message, as a {@link SluiceConfigException} on {@code sluice.store}.
 * Public so that other Spring integrations (sluice-spring-cloud-gateway) open their store from the same settings.
 */
public final class StoreFactory {
    private StoreFactory() {}

    public static RateLimiter create(
            SluiceProperties p, @Nullable Ticker ticker, Supplier<@Nullable DataSource> dataSource) {
        String store = p.getStore() == null ? "memory" : p.getStore().strip();
        String lower = store.toLowerCase(Locale.ROOT);
        if (lower.equals("memory")) {
            InMemoryRateLimiter.Builder b = InMemoryRateLimiter.builder();
            if (ticker != null) {
                b.ticker(ticker);
            }
            return b.build();
        }
        Supplier<RateLimiter> opener;
        if (lower.startsWith("redis://") || lower.startsWith("rediss://") || lower.startsWith("redis-socket://")) {
            require("dev.sluice.redis.RedisRateLimiter", "sluice-redis", store);
            opener = RedisStore.opener(store, p.getBudget());
        } else if (lower.equals("datasource")) {
            require("dev.sluice.postgres.PostgresRateLimiter", "sluice-postgres", store);
            DataSource ds = dataSource.get();
            if (ds == null) {
                throw new SluiceConfigException(
                        "sluice.store",
                        "'datasource' but the application has no single"
                                + " DataSource bean: configure spring.datasource.url, or use memory or redis://host:6379");
            }
            opener = PostgresStore.opener(ds, p.getBudget());
        } else {
            throw new SluiceConfigException(
                    "sluice.store",
                    "unknown store '" + store + "': use memory, redis://host:6379 (or rediss://) or datasource");
        }
        FailSafeRateLimiter.Builder b = FailSafeRateLimiter.builder(opener).policy(p.getFailurePolicy());
        try {
            b.probeInterval(p.getProbeInterval());
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException("sluice.probe-interval", String.valueOf(e.getMessage()));
        }
        if (ticker != null) {
            b.ticker(ticker);
        }
        try {
            return b.build();
        } catch (StoreException e) {
            // the store refused this configuration (a password, a host, a port): the application must not start
            // with rate limiting silently off; Spring Boot's report shows the store's own message and its fix
            SluiceConfigException c = new SluiceConfigException("sluice.store", String.valueOf(e.getMessage()));
            c.initCause(e);
            throw c;
        }
    }

    private static void require(String className, String artifact, String store) {
        if (!ClassUtils.isPresent(className, StoreFactory.class.getClassLoader())) {
            throw new SluiceConfigException(
                    "sluice.store",
                    "'" + store + "' needs dev.sluice:" + artifact
                            + " on the classpath: add that dependency, or use sluice.store: memory");
        }
    }
}
