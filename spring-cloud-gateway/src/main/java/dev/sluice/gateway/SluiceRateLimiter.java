package dev.sluice.gateway;

import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.spring.DecisionCounts;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud Gateway's {@code RequestRateLimiter} filter deciding with Sluice: the limiter behind
 * {@code rate-limiter: "#{@sluiceRateLimiter}"}, or the gateway's default one when it is its only limiter.
 *
 * <p><b>Configuration</b> is read as {@code RedisRateLimiter} reads it: per route from the filter's
 * {@code sluice-rate-limiter.*} arguments, else from a {@code RequestRateLimiter} in {@code default-filters}, else
 * from the default config given to the constructor (the Java DSL's way). The arguments are RedisRateLimiter's
 * ({@code replenishRate}, {@code burstCapacity}, {@code requestedTokens}: same meaning, same defaults) or Sluice's
 * ({@code requests_per_unit}, {@code unit} or {@code window}, {@code algorithm}, {@code burst}); see
 * {@link RouteLimit}. The switches and header names RedisRateLimiter takes under
 * {@code spring.cloud.gateway.server.webflux.redis-rate-limiter.*} this class takes under
 * {@code ...sluice-rate-limiter.*}.
 *
 * <p><b>State</b> is per route and key, as with RedisRateLimiter: the key resolver's {@code id} on route
 * {@code routeId} is the Sluice key {@code routeId.id}. An id too long for a key (more than
 * {@value Permit#MAX_KEY_LENGTH} characters with the route) is replaced by its SHA-256, so it still has a bucket of
 * its own.
 *
 * <p><b>Answers</b> carry RedisRateLimiter's headers with its values ({@code X-RateLimit-Remaining}: tokens left,
 * floored; {@code -Replenish-Rate}, {@code -Burst-Capacity}, {@code -Requested-Tokens}: the route's settings) and
 * Sluice's: {@code RateLimit-Policy} and {@code RateLimit} in the IETF draft's syntax, named by the route id, and
 * {@code Retry-After} (whole seconds, rounded up) on a denial. A decision the store did not make answers
 * {@code X-RateLimit-Remaining: -1}, as RedisRateLimiter does on a Redis error, with no {@code RateLimit} and with
 * {@code Sluice-Degraded: <cause>} (see {@link GatewayAnswers}). {@code include-headers: false} leaves all of them
 * out. Every decision is counted in the application's {@link DecisionCounts}, under the route's id.
 *
 * <p><b>A route without arguments</b> ({@code redis-rate-limiter.*} left unrenamed, say) fails as the routes load,
 * naming the route and the arguments it needs ({@link RouteArgumentsCheck}), rather than answering 500 to every
 * request.
 *
 * <p><b>Never blocks the event loop.</b> Every decision goes through {@link RateLimiter#tryAcquireAsync}: the
 * in-memory store answers at once, on the request's own thread; Redis and PostgreSQL complete a future on their own
 * threads, and a failing store is answered by the {@code FailSafeRateLimiter} the auto-configuration puts in front
 * of it (its failure policy, {@code sluice.failure-policy}), within the store's time budget. The rest of the filter
 * chain then continues on the thread that completed the future (for Redis, a Lettuce I/O thread) until its next
 * asynchronous step, as it does after SCG's RedisRateLimiter: no thread hop per request, and filters must not
 * block there, as anywhere in a gateway.
 */
@ConfigurationProperties(GatewayProperties.PREFIX + "." + SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME)
public class SluiceRateLimiter extends AbstractRateLimiter<SluiceRateLimiter.Config>
        implements ApplicationContextAware {

    /** The prefix of this limiter's route arguments, as {@code redis-rate-limiter} is RedisRateLimiter's. */
    public static final String CONFIGURATION_PROPERTY_NAME = "sluice-rate-limiter";

    /** Tokens left after this request, floored (RedisRateLimiter's header). */
    public static final String REMAINING_HEADER = "X-RateLimit-Remaining";
    /** The route's replenishRate (RedisRateLimiter's header). */
    public static final String REPLENISH_RATE_HEADER = "X-RateLimit-Replenish-Rate";
    /** The route's burstCapacity (RedisRateLimiter's header). */
    public static final String BURST_CAPACITY_HEADER = "X-RateLimit-Burst-Capacity";
    /** The route's requestedTokens (RedisRateLimiter's header). */
    public static final String REQUESTED_TOKENS_HEADER = "X-RateLimit-Requested-Tokens";

    private final RateLimiter store;
    /** The Java DSL's config for routes without their own; null with a ConfigurationService. */
    private final @Nullable Config defaultConfig;
    /** Whether the constructor was given the gateway's ConfigurationService (else the context may give it). */
    private final boolean hasConfigurationService;

    /** What answers carry, under which names, and where they are counted. */
    private final GatewayAnswers answers = new GatewayAnswers();

    /**
     * A limiter configured per route by the gateway's {@code ConfigurationService}, deciding on {@code store}
     * (put a remote store behind a {@code FailSafeRateLimiter}: its failures are then decided by a policy).
     */
    public SluiceRateLimiter(RateLimiter store, @Nullable ConfigurationService configurationService) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.defaultConfig = null;
        this.hasConfigurationService = configurationService != null;
    }

    /**
     * A limiter with one configuration for every route that has none of its own, for the Java DSL
     * ({@code new SluiceRateLimiter(store, new Config().setReplenishRate(10).setBurstCapacity(20))}).
     *
     * @throws IllegalArgumentException when {@code defaultConfig} cannot work, naming the setting
     */
    public SluiceRateLimiter(RateLimiter store, Config defaultConfig) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, null);
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.defaultConfig = Objects.requireNonNull(defaultConfig, "defaultConfig must not be null");
        this.hasConfigurationService = false;
        defaultConfig.resolve("default config");
    }

    /**
     * A limiter built with a default config and defined as a bean still reads the routes' own arguments: it takes
     * the gateway's ConfigurationService from the context, as RedisRateLimiter does.
     */
    @Override
    public void setApplicationContext(ApplicationContext context) {
        if (!hasConfigurationService && context.getBeanNamesForType(ConfigurationService.class).length > 0) {
            setConfigurationService(context.getBean(ConfigurationService.class));
        }
        if (!answers.counting()) {
            context.getBeanProvider(DecisionCounts.class).ifAvailable(answers::countIn);
        }
    }

    /**
     * Where the decisions are counted, for the {@code ratelimits} endpoint and the {@code sluice.requests} meter
     * (the auto-configuration gives the application's; a limiter defined as a bean takes it from the context).
     */
    public SluiceRateLimiter countingIn(DecisionCounts counts) {
        answers.countIn(Objects.requireNonNull(counts, "counts must not be null"));
        return this;
    }

    /** Binds a route's arguments (see AbstractRateLimiter) and checks them now, so a bad route fails as it loads. */
    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        super.onApplicationEvent(event);
        Config c = getConfig().get(event.getRouteId());
        if (c != null) {
            c.resolve(where(event.getRouteId()));
        }
    }

    /**
     * Told (by {@link RouteArgumentsCheck}) that route {@code routeId} has loaded with a {@code RequestRateLimiter}
     * deciding with this limiter: checks that the route has a configuration and records its limit for the
     * {@code ratelimits} endpoint. Throwing here fails the route as it loads, as any bad argument does: the gateway
     * does not start, or with {@code fail-on-route-definition-error: false} leaves the route out with a warning.
     *
     * @param otherArguments the route's arguments of another rate limiter ({@code redis-rate-limiter.*}), to name
     *                       in the message; null when it has none
     * @throws IllegalArgumentException naming the route and the arguments it needs
     */
    public void routeLoaded(String routeId, @Nullable Collection<String> otherArguments) {
        RouteLimit route = configuration(routeId, otherArguments).resolve(where(routeId));
        answers.counts().route(routeId, route.limit(), route.cost());
    }

    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        RouteLimit route = loadConfiguration(routeId).forRoute(routeId);
        Limit limit = route.limit();
        if (limit == null) { // the route denies every request
            return Mono.just(answers.closed(routeId, route));
        }
        String key = key(routeId, id);
        return Mono.fromFuture(() -> store.tryAcquireAsync(key, limit, route.cost()))
                .map(d -> answers.decided(routeId, route, d))
                .onErrorResume(e -> Mono.just(answers.failed(routeId, route, e)));
    }

    /** The route's own configuration, else the default config, else default-filters' (RedisRateLimiter's order). */
    Config loadConfiguration(String routeId) {
        return configuration(routeId, null);
    }

    private Config configuration(String routeId, @Nullable Collection<String> foreign) {
        Config c = getConfig().getOrDefault(routeId, defaultConfig);
        if (c == null) {
            c = getConfig().get(RouteDefinitionRouteLocator.DEFAULT_FILTERS);
        }
        if (c == null) {
            throw new IllegalArgumentException(RouteLimit.missing(where(routeId), foreign));
        }
        return c;
    }

    /** {@code routeId.id}, or {@code routeId.sha256:<hex of id>} when that would be longer than a key may be. */
    static String key(String routeId, String id) {
        return Permit.boundedKey(routeId + '.', id);
    }

    private static String where(String routeId) {
        return RouteDefinitionRouteLocator.DEFAULT_FILTERS.equals(routeId)
                ? "default-filters"
                : "route '" + routeId + "'";
    }

    /** The store deciding. */
    public RateLimiter getStore() {
        return store;
    }

    /** Whether answers carry the rate-limit headers (RedisRateLimiter's, the IETF draft's, Retry-After, ours). */
    public boolean isIncludeHeaders() {
        return answers.include;
    }

    public void setIncludeHeaders(boolean includeHeaders) {
        answers.include = includeHeaders;
    }

    /** The name of the header of the tokens left. */
    public String getRemainingHeader() {
        return answers.remaining;
    }

    public void setRemainingHeader(String remainingHeader) {
        answers.remaining = remainingHeader;
    }

    /** The name of the header of the route's replenish rate. */
    public String getReplenishRateHeader() {
        return answers.replenishRate;
    }

    public void setReplenishRateHeader(String replenishRateHeader) {
        answers.replenishRate = replenishRateHeader;
    }

    /** The name of the header of the route's burst capacity. */
    public String getBurstCapacityHeader() {
        return answers.burstCapacity;
    }

    public void setBurstCapacityHeader(String burstCapacityHeader) {
        answers.burstCapacity = burstCapacityHeader;
    }

    /** The name of the header of the tokens each request spends. */
    public String getRequestedTokensHeader() {
        return answers.requestedTokens;
    }

    public void setRequestedTokensHeader(String requestedTokensHeader) {
        answers.requestedTokens = requestedTokensHeader;
    }

    /**
     * One route's limit: RedisRateLimiter's words ({@code replenishRate}, {@code burstCapacity},
     * {@code requestedTokens}) or Sluice's ({@code requests_per_unit}, {@code unit} or {@code window},
     * {@code algorithm}, {@code burst}, and {@code requestedTokens} as the cost); see {@link RouteLimit}. The
     * setters return the config, as RedisRateLimiter.Config's do.
     */
    public static class Config {
        private @Nullable Integer replenishRate;
        private @Nullable Integer burstCapacity;
        private int requestedTokens = 1;
        private @Nullable Long requestsPerUnit;
        private @Nullable String unit;
        private @Nullable Duration window;
        private @Nullable String algorithm;
        private @Nullable Long burst;
        /** What the settings above read as; dropped by every setter. */
        private volatile @Nullable RouteLimit resolved;

        /** Tokens added per second (RedisRateLimiter's replenishRate); 0 when unset. */
        public int getReplenishRate() {
            return replenishRate == null ? 0 : replenishRate;
        }

        public Config setReplenishRate(int replenishRate) {
            this.replenishRate = replenishRate;
            resolved = null;
            return this;
        }

        /** Tokens the bucket holds (RedisRateLimiter's burstCapacity); default 1; 0 denies every request. */
        public int getBurstCapacity() {
            return burstCapacity == null ? 1 : burstCapacity;
        }

        public Config setBurstCapacity(int burstCapacity) {
            this.burstCapacity = burstCapacity;
            resolved = null;
            return this;
        }

        /** Tokens each request spends, in either vocabulary; default 1. */
        public int getRequestedTokens() {
            return requestedTokens;
        }

        public Config setRequestedTokens(int requestedTokens) {
            this.requestedTokens = requestedTokens;
            resolved = null;
            return this;
        }

        /** How many requests per unit (or window), Sluice's words. */
        public @Nullable Long getRequestsPerUnit() {
            return requestsPerUnit;
        }

        public Config setRequestsPerUnit(@Nullable Long requestsPerUnit) {
            this.requestsPerUnit = requestsPerUnit;
            resolved = null;
            return this;
        }

        /** The period of requests_per_unit: second, minute, hour, day (or week, month, year). */
        public @Nullable String getUnit() {
            return unit;
        }

        public Config setUnit(@Nullable String unit) {
            this.unit = unit;
            resolved = null;
            return this;
        }

        /** Any period instead of unit, such as 90s or 1500ms. */
        public @Nullable Duration getWindow() {
            return window;
        }

        public Config setWindow(@Nullable Duration window) {
            this.window = window;
            resolved = null;
            return this;
        }

        /** token_bucket, gcra, fixed_window (the default, as everywhere in Sluice), sliding_window or sliding_log. */
        public @Nullable String getAlgorithm() {
            return algorithm;
        }

        public Config setAlgorithm(@Nullable String algorithm) {
            this.algorithm = algorithm;
            resolved = null;
            return this;
        }

        /** How many may pass at once when idle (token_bucket and gcra); defaults to requests_per_unit. */
        public @Nullable Long getBurst() {
            return burst;
        }

        public Config setBurst(@Nullable Long burst) {
            this.burst = burst;
            resolved = null;
            return this;
        }

        @Nullable
        Integer replenishRateIfSet() {
            return replenishRate;
        }

        @Nullable
        Integer burstCapacityIfSet() {
            return burstCapacity;
        }

        /** {@link #resolve} for a request of route {@code routeId}: its name is only built for the first read. */
        RouteLimit forRoute(String routeId) {
            RouteLimit r = resolved;
            return r != null ? r : resolve(where(routeId));
        }

        /** The settings as a limit, read once (they change only while the gateway binds them). */
        RouteLimit resolve(String where) {
            RouteLimit r = resolved;
            if (r == null) {
                r = RouteLimit.of(where, this);
                resolved = r;
            }
            return r;
        }

        @Override
        public String toString() {
            return requestsPerUnit != null || unit != null || window != null || algorithm != null || burst != null
                    ? "Config[requestsPerUnit=" + requestsPerUnit + ", unit=" + unit + ", window=" + window
                            + ", algorithm=" + algorithm + ", burst=" + burst + ", requestedTokens=" + requestedTokens
                            + "]"
                    : "Config[replenishRate=" + getReplenishRate() + ", burstCapacity=" + getBurstCapacity()
                            + ", requestedTokens=" + requestedTokens + "]";
        }
    }
}
