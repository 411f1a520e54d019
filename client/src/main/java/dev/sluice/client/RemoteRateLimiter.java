package dev.sluice.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.store.TimeBudget;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} whose decisions are made by a running {@code sluice serve}: an application moves from
 * in-process limits to limits shared by a fleet by changing one builder call,
 * {@code InMemoryRateLimiter.create()} → {@code RemoteRateLimiter.create("http://sluice:8080")}.
 *
 * <p>Each call is one {@code POST} to the service's HTTP API, carrying the key as the descriptor
 * {@code [key=<key>]} of a client domain (default {@code "sluice"}, which needs no rules) and the {@link Limit}
 * itself, its name included, as the descriptor's {@code limit}. The service therefore keeps state per (key, limit
 * identity) and reads it under a named limit's changed numbers exactly as a local store would, on whatever store it runs (memory, Redis, PostgreSQL), with the service's clock. Multi-permit calls
 * are one request and all-or-nothing on the service. A cost known afterwards is reserved with {@code POST /v1/check}
 * and a {@code reservation} ({@link #tryAcquireEstimate}) and settled with {@code POST /v1/settle} ({@link #settle}). {@link #peek(String, Limit, long)} is {@code POST /v1/peek}
 * with {@code hits} = the cost asked about: the service's own store peeks, nothing is taken.
 *
 * <p>Bad input throws {@link IllegalArgumentException} before any request is sent (the same checks as every
 * store). A service that cannot be reached, does not answer within the {@linkplain Builder#timeBudget time budget}
 * or answers with an error throws {@link RemoteRateLimiterException}, a {@link dev.sluice.StoreException} that
 * says how it failed: wrap the limiter in {@link dev.sluice.failsafe.FailSafeRateLimiter} to fail open, fail closed or fall
 * back to local limits instead. A decision the <em>service</em> made in a degraded mode (its own store was down
 * and its failure policy decided) carries that cause in {@link Decision#degradation()}.
 *
 * <p><b>Time budget.</b> Every call — connecting, sending, waiting for the answer and reading it — is bounded by
 * one budget (default {@value #DEFAULT_BUDGET_MILLIS} ms, {@link dev.sluice.store.TimeBudget}): the JDK client's
 * connect and request timeouts are set to it, and the call's future is failed with a {@code TIMEOUT} at its end
 * whatever the JDK client does (its request timeout stops at the response headers). A thread of this process that
 * wakes more than 5 ms late (a GC pause, a starved CPU) has its wait extended once by as much. The default is twice
 * the service's default store budget (1 s): the budget catches a dead or unreachable service, not a busy
 * one. A call that times out here may still have been decided by the service.
 */
public final class RemoteRateLimiter implements RateLimiter {
    /** The default {@linkplain Builder#timeBudget time budget} per call, in milliseconds. */
    public static final long DEFAULT_BUDGET_MILLIS = 2000;

    private final ServiceCalls calls;
    private final RemoteInFlight inFlight;
    private final URI check;
    private final URI peek;
    private final URI reserve;
    private final URI reset;
    private final URI settle;
    private final String domain;

    private RemoteRateLimiter(Builder b) {
        String base = b.baseUrl.replaceAll("/+$", "");
        this.check = URI.create(base + "/v1/check");
        this.peek = URI.create(base + "/v1/peek");
        this.reserve = URI.create(base + "/v1/reserve");
        this.reset = URI.create(base + "/v1/reset");
        this.settle = URI.create(base + "/v1/settle");
        this.domain = b.domain;
        HttpClient http = b.client != null
                ? b.client
                : HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(b.budget)
                        .build();
        this.calls = new ServiceCalls(http, b.token == null ? null : "Bearer " + b.token, b.budget);
        this.inFlight = new RemoteInFlight(calls, base, domain);
    }

    /** A limiter on the service at {@code baseUrl}, e.g. {@code http://127.0.0.1:8080}. */
    public static RemoteRateLimiter create(String baseUrl) {
        return builder(baseUrl).build();
    }

    public static Builder builder(String baseUrl) {
        return new Builder(baseUrl);
    }

    /** Options for {@link RemoteRateLimiter}. */
    public static final class Builder {
        private final String baseUrl;
        private String domain = "sluice";
        private @Nullable String token;
        private Duration budget = Duration.ofMillis(DEFAULT_BUDGET_MILLIS);
        private @Nullable HttpClient client;

        private Builder(String baseUrl) {
            this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl must not be null: e.g. http://127.0.0.1:8080");
            URI.create(baseUrl);
        }

        /** The domain this client's keys live in (a namespace; it needs no rules). Default {@code sluice}. */
        public Builder domain(String domain) {
            if (domain == null || domain.isEmpty()) {
                throw new IllegalArgumentException("domain must be a non-empty string");
            }
            this.domain = domain;
            return this;
        }

        /** The service's bearer token ({@code sluice serve --token}); null: none (the default). */
        public Builder token(@Nullable String token) {
            this.token = token;
            return this;
        }

        /**
         * The time budget of every call, connecting and reading the answer included (default
         * {@value RemoteRateLimiter#DEFAULT_BUDGET_MILLIS} ms); a call fails with a {@code TIMEOUT}
         * {@link RemoteRateLimiterException} when it runs out.
         */
        public Builder timeBudget(Duration budget) {
            this.budget = TimeBudget.of("timeBudget", budget).duration(); // 1 ms to 1 hour
            return this;
        }

        /** The same as {@link #timeBudget(Duration)}: the name it had before every store had a time budget. */
        @Deprecated
        @SuppressWarnings("InlineMeSuggester") // @InlineMe would make Error Prone's annotations a dependency
        public Builder timeout(Duration timeout) {
            return timeBudget(timeout);
        }

        /** A client of your own (proxy, TLS settings, executor); null: the limiter's own (the default). */
        public Builder httpClient(@Nullable HttpClient client) {
            this.client = client;
            return this;
        }

        public RemoteRateLimiter build() {
            return new RemoteRateLimiter(this);
        }
    }

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        return ServiceCalls.join(tryAcquireAsync(key, limit, cost));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        return send(check, body(List.of(new Permit(key, limit, cost)), null)).thenApply(ServiceCalls::decision);
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        return ServiceCalls.join(tryAcquireAsync(permits));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        Permit.checkAll(permits);
        return send(check, body(permits, null)).thenApply(ServiceCalls::decision);
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        return ServiceCalls.join(reserveAsync(key, limit, cost, maxWait));
    }

    @Override
    public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        long waitNanos = Algorithms.checkReserve(key, limit, cost, maxWait);
        return send(reserve, body(List.of(new Permit(key, limit, cost)), waitNanos))
                .thenApply(ServiceCalls::decision);
    }

    /**
     * {@code POST /v1/peek} with {@code hits: cost}. A service whose store cannot peek answers 501, thrown as
     * {@link UnsupportedOperationException} like the store itself would.
     */
    @Override
    public Decision peek(String key, Limit limit, long cost) {
        return ServiceCalls.join(peekAsync(key, limit, cost));
    }

    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        return send(peek, body(List.of(new Permit(key, limit, cost)), null)).thenApply(ServiceCalls::decision);
    }

    @Override
    public void reset(String key, Limit limit) {
        ServiceCalls.join(resetAsync(key, limit));
    }

    @Override
    public CompletableFuture<Void> resetAsync(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        return send(reset, body(List.of(new Permit(key, limit, 1)), null)).thenRun(() -> {});
    }

    @Override
    public Decision tryAcquireEstimate(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        return ServiceCalls.join(tryAcquireEstimateAsync(key, limit, estimate, reservation, settleWithin));
    }

    /** {@code POST /v1/check} with a {@code reservation}: an id already pending throws IllegalArgumentException. */
    @Override
    public CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        Settlement.checkId("reservation", reservation);
        Settlement.checkWithin("settleWithin", settleWithin);
        Permit.check(key, limit, estimate);
        ObjectNode root = body(List.of(new Permit(key, limit, estimate)), null);
        root.putObject("reservation").put("id", reservation).put("settle_within_ns", settleWithin.toNanos());
        return send(check, root).thenApply(ServiceCalls::decision);
    }

    @Override
    public Settlement settle(String key, Limit limit, String reservation, long actual) {
        return ServiceCalls.join(settleAsync(key, limit, reservation, actual));
    }

    /** {@code POST /v1/settle}: the service's store settles, on its own clock. */
    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String reservation, long actual) {
        Permit.checkKeyAndLimit(key, limit);
        Settlement.checkId("reservation", reservation);
        Settlement.checkActual(limit, actual);
        ObjectNode root = body(List.of(new Permit(key, limit, 1)), null);
        ((ObjectNode) root.path("descriptors").path(0)).remove("hits"); // a settle's cost is 'actual'
        root.put("actual", actual).putObject("reservation").put("id", reservation);
        return calls.send(settle, root.toString())
                .thenApply(j -> j.path("settled").asBoolean()
                        ? new Settlement(
                                true,
                                j.get("estimate").asLong(),
                                j.get("adjusted").asLong(),
                                j.get("remaining").asLong())
                        : Settlement.NOT_PENDING);
    }

    /**
     * Work in flight on the service's store: {@code POST /v1/in-flight/acquire}, {@code /release} and {@code /renew}
     * with this client's domain; the service's store holds the slots, on its clock, under its failure policy.
     */
    @Override
    public InFlightLimiter inFlight() {
        return inFlight;
    }

    /** Holds no connections of its own beyond the shared HTTP client: nothing to release. */
    @Override
    public void close() {}

    /** @param maxWaitNanos a reservation's wait, null for the other calls */
    private ObjectNode body(List<Permit> permits, @Nullable Long maxWaitNanos) {
        ObjectNode root = ServiceCalls.JSON.createObjectNode().put("domain", domain);
        if (maxWaitNanos != null) {
            root.put("max_wait_ns", maxWaitNanos);
        }
        ArrayNode ds = root.putArray("descriptors");
        for (Permit p : permits) {
            ObjectNode d = ds.addObject();
            d.putArray("entries").addObject().put("key", "key").put("value", p.key());
            d.put("hits", p.cost());
            Limit l = p.limit();
            ObjectNode lj = d.putObject("limit")
                    .put("algorithm", l.algorithm().configName())
                    .put("requests_per_unit", l.rate().permits())
                    .put("window", window(l.rate().periodNanos()));
            if (l.algorithm().isTat()) {
                lj.put("burst", l.capacity());
            }
            if (l.name() != null) {
                lj.put("name", l.name()); // the limit's identity: its state survives a change of its numbers
            }
        }
        return root;
    }

    /** A period as the service reads it (at most 18 digits): in seconds when whole, else in nanoseconds. */
    private static String window(long nanos) {
        return nanos % 1_000_000_000L == 0 ? nanos / 1_000_000_000L + "s" : nanos + "ns";
    }

    private CompletableFuture<JsonNode> send(URI uri, ObjectNode body) {
        return calls.send(uri, body.toString());
    }
}
