package dev.sluice.gateway;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.RateUnit;
import dev.sluice.Settlement;
import dev.sluice.http.RateLimitFields;
import dev.sluice.servlet.CostAfter;
import dev.sluice.servlet.RateLimitRule;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.PrincipalNameKeyResolver;
import org.springframework.cloud.gateway.support.HasRouteId;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The {@code SluiceLimit} route filter: what {@code RequestRateLimiter} cannot do, since it decides before the
 * downstream answers and never hears of the exchange again. Per route and key (the {@code key-resolver}, by default
 * the gateway's, as for {@code RequestRateLimiter}):
 *
 * <ul>
 *   <li>{@code max-in-flight}: at most so many exchanges of a key at once; a slot is held from before the request
 *       goes downstream until the exchange ends (the response written to the client, streamed ones included; an
 *       error; the client gone), then released; beyond it, {@code 429} with {@code Retry-After: 1}. If the gateway
 *       dies, a slot frees itself when its {@code in-flight-lease} ends (default 10 minutes).</li>
 *   <li>a cost known afterwards: a limit in Sluice's words ({@code requests_per_unit}, {@code unit} or {@code
 *       window}, {@code algorithm}, {@code burst}) with {@code estimate}: each exchange reserves the estimate, and
 *       when it ends settles on the actual cost from the exchange attribute {@code cost-attribute} (default {@value
 *       CostAfter#DEFAULT_ATTRIBUTE}, for a filter of the application's that counts, say, a streamed body), else the
 *       downstream's response header {@code cost-header} (e.g. {@code X-Tokens-Used}), else at the estimate.</li>
 * </ul>
 *
 * <pre>
 * filters:
 *   - name: SluiceLimit
 *     args:
 *       key-resolver: "#{&#64;apiKeyResolver}"
 *       max-in-flight: 2
 *       requests_per_unit: 10000
 *       unit: minute
 *       algorithm: token_bucket
 *       estimate: 500
 *       cost-header: X-Tokens-Used
 * </pre>
 *
 * The slot is taken first, then the estimate; a denied estimate releases the slot, so a denied exchange holds
 * nothing. A request without a key is refused ({@code 403}), as {@code RequestRateLimiter} refuses it. A store that
 * fails is decided by the failure policy ({@code sluice.failure-policy}); if it throws anyway, the exchange goes on
 * and the failure is logged. Every call is asynchronous: the event loop never waits on the store.
 */
public class SluiceLimitGatewayFilterFactory
        extends AbstractGatewayFilterFactory<SluiceLimitGatewayFilterFactory.Config> {
    private final RateLimiter store;
    private final ObjectProvider<KeyResolver> keyResolvers;

    /**
     * @param keyResolvers the gateway's key resolver, when it has exactly one, for routes without {@code
     *     key-resolver}; otherwise the principal's name, as {@code RequestRateLimiter}'s default
     */
    public SluiceLimitGatewayFilterFactory(RateLimiter store, ObjectProvider<KeyResolver> keyResolvers) {
        super(Config.class);
        this.store = Objects.requireNonNull(store, "store");
        this.keyResolvers = Objects.requireNonNull(keyResolvers, "keyResolvers");
    }

    /** What the exchange may do after the slot and the estimate: go on, go on unlimited, or be denied. */
    private record Step(
            @Nullable Decision slotDenied, @Nullable Decision rateDenied, boolean failed) {
        static final Step GO = new Step(null, null, false);
        static final Step FAILED = new Step(null, null, true);
    }

    @Override
    public GatewayFilter apply(Config config) {
        Route route = Route.of(config);
        if (route.maxInFlight() > 0) {
            try {
                store.inFlight(); // a store without slots fails as the route loads, not as a let-through per request
            } catch (UnsupportedOperationException e) {
                throw new IllegalArgumentException(
                        "route '" + route.id() + "': SluiceLimit's max-in-flight needs a"
                                + " store that limits work in flight, and "
                                + store.getClass().getSimpleName() + " does not ("
                                + e.getMessage() + ")",
                        e);
            }
        }
        KeyResolver configured = config.getKeyResolver();
        return (exchange, chain) -> {
            KeyResolver keys = configured != null
                    ? configured
                    : Objects.requireNonNullElseGet(keyResolvers.getIfUnique(), PrincipalNameKeyResolver::new);
            return keys.resolve(exchange).defaultIfEmpty("").flatMap(value -> {
                if (value.isEmpty()) {
                    exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
                    return exchange.getResponse().setComplete();
                }
                ExchangeHolds holds = new ExchangeHolds(store, route, Permit.boundedKey(route.id() + ".", value));
                return holds.takeSlot()
                        .flatMap(slot -> slot.denied()
                                ? Mono.just(new Step(slot, null, false))
                                : holds.reserve().map(d -> d.denied() ? new Step(null, d, false) : Step.GO))
                        .onErrorResume(RuntimeException.class, e -> {
                            ExchangeHolds.warn(
                                    "Sluice failed on route '" + route.id() + "'; letting the request through", e);
                            return Mono.just(Step.FAILED);
                        })
                        .flatMap(step -> {
                            if (step.equals(Step.GO)) {
                                return chain.filter(exchange).doFinally(signal -> holds.finish(exchange));
                            }
                            holds.undo(); // denied (or failed): nothing held goes on
                            if (step.failed()) {
                                return chain.filter(exchange);
                            }
                            if (step.slotDenied() != null) {
                                return deny(
                                        exchange.getResponse(),
                                        route,
                                        "Max in flight of route '" + route.id()
                                                + "' reached: " + route.maxInFlight() + " requests of this key are in"
                                                + " flight; retry in 1 s, or when one of them ends.",
                                        1);
                            }
                            long retry = RateLimitFields.retryAfterSeconds(Objects.requireNonNull(step.rateDenied()));
                            return deny(
                                    exchange.getResponse(),
                                    route,
                                    "Rate limit '" + route.id() + "' exceeded: retry in " + retry + " s.",
                                    retry);
                        });
            });
        };
    }

    private static Mono<Void> deny(ServerHttpResponse response, Route route, String detail, long retryAfterSeconds) {
        response.setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
        response.getHeaders().set(RateLimitFields.RETRY_AFTER, Long.toString(retryAfterSeconds));
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        StringBuilder json = new StringBuilder(
                "{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429," + "\"detail\":");
        dev.sluice.http.JsonText.string(json, detail).append(",\"limit\":");
        dev.sluice.http.JsonText.string(json, route.id())
                .append(",\"retryAfterSeconds\":")
                .append(retryAfterSeconds);
        byte[] body = json.append('}').toString().getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** A route's arguments read and checked once, when the route loads. */
    record Route(
            String id,
            long maxInFlight,
            Duration lease,
            @Nullable Limit limit,
            long estimate,
            String costAttribute,
            @Nullable String costHeader,
            Duration settleWithin) {

        static Route of(Config c) {
            String id = c.getRouteId() == null ? "route" : c.getRouteId();
            String arg = "route '" + id + "': SluiceLimit's ";
            long max = c.getMaxInFlight() == null ? 0 : c.getMaxInFlight();
            if (c.getMaxInFlight() != null && max < 1) {
                throw new IllegalArgumentException(arg + "max-in-flight " + max + " must be at least 1");
            }
            try {
                Settlement.checkWithin(arg + "in-flight-lease", c.getInFlightLease());
                Settlement.checkWithin(arg + "settle-within", c.getSettleWithin());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            Limit limit = null;
            if (c.getRequestsPerUnit() != null) {
                if (c.getEstimate() == null) {
                    throw new IllegalArgumentException(arg + "estimate is missing: the cost reserved before the"
                            + " request goes downstream, settled on cost-header or cost-attribute when it ends");
                }
                try {
                    Duration window = c.getWindow() != null
                            ? c.getWindow()
                            : RateUnit.fromConfigName(c.getUnit() == null ? "" : c.getUnit())
                                    .length();
                    Algorithm a = c.getAlgorithm() == null
                            ? Algorithm.FIXED_WINDOW
                            : Algorithm.fromConfigName(c.getAlgorithm());
                    limit = new LimitSpec(a, c.getRequestsPerUnit(), window, c.getBurst())
                            .toLimit()
                            .named("gateway-cost-after");
                    limit.checkCost(c.getEstimate());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(arg + e.getMessage(), e);
                }
            } else if (c.getEstimate() != null || c.getCostHeader() != null) {
                throw new IllegalArgumentException(arg + "estimate/cost-header need a limit: add requests_per_unit and"
                        + " unit (the tokens a key may use per unit)");
            }
            if (limit == null && max == 0) {
                throw new IllegalArgumentException(arg + "arguments limit nothing: give max-in-flight, or"
                        + " requests_per_unit, unit and estimate (a cost known afterwards), or both");
            }
            return new Route(
                    id,
                    max,
                    c.getInFlightLease(),
                    limit,
                    c.getEstimate() == null ? 0 : c.getEstimate(),
                    c.getCostAttribute(),
                    c.getCostHeader(),
                    c.getSettleWithin());
        }

        /** The actual cost the exchange reports: the attribute, else the downstream's header; -1 when neither. */
        long actual(ServerWebExchange exchange) {
            Object a = exchange.getAttribute(costAttribute);
            return CostAfter.parseActual(
                    a != null
                            ? a
                            : costHeader == null
                                    ? null
                                    : exchange.getResponse().getHeaders().getFirst(costHeader));
        }
    }

    /** The route's arguments. */
    public static class Config implements HasRouteId {
        private @Nullable String routeId;
        private @Nullable KeyResolver keyResolver;
        private @Nullable Long maxInFlight;
        private Duration inFlightLease = RateLimitRule.DEFAULT_IN_FLIGHT_LEASE;
        private @Nullable Long requestsPerUnit;
        private @Nullable String unit;
        private @Nullable Duration window;
        private @Nullable String algorithm;
        private @Nullable Long burst;
        private @Nullable Long estimate;
        private String costAttribute = CostAfter.DEFAULT_ATTRIBUTE;
        private @Nullable String costHeader;
        private Duration settleWithin = Settlement.DEFAULT_SETTLE_WITHIN;

        @Override
        public void setRouteId(String routeId) {
            this.routeId = routeId;
        }

        @Override
        public @Nullable String getRouteId() {
            return routeId;
        }

        public @Nullable KeyResolver getKeyResolver() {
            return keyResolver;
        }

        public Config setKeyResolver(@Nullable KeyResolver keyResolver) {
            this.keyResolver = keyResolver;
            return this;
        }

        public @Nullable Long getMaxInFlight() {
            return maxInFlight;
        }

        public Config setMaxInFlight(@Nullable Long maxInFlight) {
            this.maxInFlight = maxInFlight;
            return this;
        }

        public Duration getInFlightLease() {
            return inFlightLease;
        }

        public Config setInFlightLease(Duration inFlightLease) {
            this.inFlightLease = inFlightLease;
            return this;
        }

        public @Nullable Long getRequestsPerUnit() {
            return requestsPerUnit;
        }

        public Config setRequestsPerUnit(@Nullable Long requestsPerUnit) {
            this.requestsPerUnit = requestsPerUnit;
            return this;
        }

        public @Nullable String getUnit() {
            return unit;
        }

        public Config setUnit(@Nullable String unit) {
            this.unit = unit;
            return this;
        }

        public @Nullable Duration getWindow() {
            return window;
        }

        public Config setWindow(@Nullable Duration window) {
            this.window = window;
            return this;
        }

        public @Nullable String getAlgorithm() {
            return algorithm;
        }

        public Config setAlgorithm(@Nullable String algorithm) {
            this.algorithm = algorithm;
            return this;
        }

        public @Nullable Long getBurst() {
            return burst;
        }

        public Config setBurst(@Nullable Long burst) {
            this.burst = burst;
            return this;
        }

        public @Nullable Long getEstimate() {
            return estimate;
        }

        public Config setEstimate(@Nullable Long estimate) {
            this.estimate = estimate;
            return this;
        }

        public String getCostAttribute() {
            return costAttribute;
        }

        public Config setCostAttribute(String costAttribute) {
            this.costAttribute = costAttribute;
            return this;
        }

        public @Nullable String getCostHeader() {
            return costHeader;
        }

        public Config setCostHeader(@Nullable String costHeader) {
            this.costHeader = costHeader;
            return this;
        }

        public Duration getSettleWithin() {
            return settleWithin;
        }

        public Config setSettleWithin(Duration settleWithin) {
            this.settleWithin = settleWithin;
            return this;
        }
    }
}
