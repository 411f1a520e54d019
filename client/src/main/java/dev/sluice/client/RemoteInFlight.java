package dev.sluice.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.algorithm.InFlightSlots;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Work in flight through a running {@code sluice serve} ({@link RemoteRateLimiter#inFlight()}): each call is one
 * {@code POST /v1/in-flight/acquire}, {@code /release} or {@code /renew} with the client's domain, so the service's
 * store holds the slots on its own clock (and its failure policy answers an acquire when that store is down: the
 * decision's {@link Decision#degradation()} says so). Bad input throws {@link IllegalArgumentException} before
 * anything is sent (the stores' checks); the service's failures are {@link RemoteRateLimiterException}s.
 */
final class RemoteInFlight implements InFlightLimiter {
    private final ServiceCalls calls;
    private final URI acquire;
    private final URI release;
    private final URI renew;
    private final String domain;

    RemoteInFlight(ServiceCalls calls, String base, String domain) {
        this.calls = calls;
        this.acquire = URI.create(base + "/v1/in-flight/acquire");
        this.release = URI.create(base + "/v1/in-flight/release");
        this.renew = URI.create(base + "/v1/in-flight/renew");
        this.domain = domain;
    }

    @Override
    public Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
        return ServiceCalls.join(tryAcquireAsync(key, maxInFlight, holder, lease));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkAcquire(key, maxInFlight, holder, lease);
        ObjectNode body = body(key, holder).put("max_in_flight", maxInFlight).put("lease_ns", leaseNanos);
        return calls.send(acquire, body.toString()).thenApply(ServiceCalls::decision);
    }

    @Override
    public boolean release(String key, String holder) {
        return ServiceCalls.join(releaseAsync(key, holder));
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        return calls.send(release, body(key, holder).toString()).thenApply(RemoteInFlight::held);
    }

    @Override
    public boolean renew(String key, String holder, Duration lease) {
        return ServiceCalls.join(renewAsync(key, holder, lease));
    }

    @Override
    public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkRenew(key, holder, lease);
        ObjectNode body = body(key, holder).put("lease_ns", leaseNanos);
        return calls.send(renew, body.toString()).thenApply(RemoteInFlight::held);
    }

    private ObjectNode body(String key, String holder) {
        return ServiceCalls.JSON
                .createObjectNode()
                .put("domain", domain)
                .put("key", key)
                .put("holder", holder);
    }

    private static boolean held(JsonNode json) {
        JsonNode held = json.get("held");
        if (held == null || !held.isBoolean()) {
            throw RemoteRateLimiterException.answered("the service's answer has no 'held': " + json, 200, null);
        }
        return held.booleanValue();
    }
}
