package dev.sluice.server.envoy;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.RateUnit;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.CheckRequest;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.FailureLog;
import dev.sluice.server.decision.RateLimitHeaders;
import dev.sluice.server.decision.ServiceException;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Envoy's {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}, answered field by field as
 * envoyproxy/ratelimit answers on its protocol, so an Envoy (or Istio, Contour, Gloo) configured for it can point
 * at Sluice unchanged; {@code POST /json} answers the same through {@link #decide}.
 *
 * <ul>
 *   <li>counting follows {@link EnvoyOptions#semantics()} (per domain: {@code semantics:} in the rules):
 *       envoy's by default (every hit counted, denied ones too, each descriptor on its own), or Sluice's strict
 *       one (a denial consumes nothing, descriptors all-or-nothing) — see {@link DecisionService#checkEnvoy};</li>
 *   <li>{@code hits_addend} on the request: 0 means 1 (proto3 cannot tell unset from 0; envoy does the same);
 *       on a descriptor ({@code UInt64Value}) it overrides the request's, and an explicit 0 checks without
 *       counting; hits above a limit are OVER_LIMIT (counted, in envoy's semantics), not an error;</li>
 *   <li>an unknown domain limits nothing: every descriptor OK, no {@code current_limit}, as envoy;</li>
 *   <li>a descriptor's {@code limit} override is used instead of the configured rule and reported back as sent
 *       (its requests_per_unit and unit; 0 requests blocks every hit);</li>
 *   <li>each limited status carries {@code current_limit} (the rule's {@code name} when it has one, its
 *       requests_per_unit and unit — UNKNOWN for a Sluice {@code window} that is no envoy unit),
 *       {@code limit_remaining} (0 when over; 2³²−1 at most; unlimited rules report 2³²−1 and no limit) and
 *       {@code duration_until_reset} in whole seconds: for a fixed window the time to its end by the service's
 *       clock (envoy's {@code CalculateReset}), even when nothing was counted; for Sluice's other algorithms the
 *       time until the limit is whole again, rounded up;</li>
 *   <li>{@code response_headers_to_add} per {@link EnvoyOptions#headers()}: none (envoy's default), envoy's
 *       {@code RateLimit-Limit}/{@code -Remaining}/{@code -Reset} of the descriptor closest to its limit, or
 *       Sluice's IETF draft headers ({@link RateLimitHeaders}); {@code dynamic_metadata} per
 *       {@link EnvoyOptions#dynamicMetadata()} as envoy's {@code RESPONSE_DYNAMIC_METADATA}. When the failure
 *       policy decided instead of the store, {@code Sluice-Degraded: <cause>} is added to the headers and
 *       {@code degraded: <cause>} to the dynamic metadata, whatever the options (envoy would have failed the call);</li>
 *   <li>bad input is {@code INVALID_ARGUMENT}; a store that is down or slow does not fail the call: the failure
 *       policy answers ({@code sluice serve --failure-policy}). {@code UNAVAILABLE} remains for a request past
 *       the service's own deadline (Envoy's {@code failure_mode_deny} then decides); a check-only
 *       descriptor on a store without peek is {@code UNIMPLEMENTED}; never a stack trace;</li>
 *   <li>envoy's global modes, off by default: {@link EnvoyOptions#shadowMode()} ({@code SHADOW_MODE}) answers OK a
 *       request that would be over, its statuses unchanged, and counts it in envoy's {@code global_shadow_mode};
 *       {@link EnvoyOptions#quotaMode()} ({@code QUOTA_MODE}) makes every descriptor a quota descriptor. Sluice's
 *       own {@code POST /v1/check} follows neither: envoy has no such API.</li>
 * </ul>
 */
public final class RlsService extends RateLimitServiceGrpc.RateLimitServiceImplBase {
    private static final Logger log = LoggerFactory.getLogger(RlsService.class);

    private final DecisionService service;
    private final EnvoyOptions options;

    public RlsService(DecisionService service, EnvoyOptions options) {
        this.service = service;
        this.options = options;
    }

    public EnvoyOptions options() {
        return options;
    }

    @Override
    public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> out) {
        long start = System.nanoTime();
        // the answer goes to the observer in here: nothing waits for the future this returns
        CompletableFuture<?> unused = decide(request).whenComplete((resp, t) -> {
            if (t == null) {
                service.metrics().timer(true).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                out.onNext(resp);
                out.onCompleted();
            } else {
                out.onError(GrpcFailures.status(FailureLog.noted(service, t, log, "grpc")));
            }
        });
    }

    /**
     * Decides one request: the answer, or a {@link ServiceException} (bad input, a store failure, unsupported,
     * internal), which the transport notes ({@link FailureLog}) and maps to its own answer. Shared by gRPC and
     * {@code POST /json}.
     */
    public CompletableFuture<RateLimitResponse> decide(RateLimitRequest request) {
        CheckRequest check;
        try {
            check = toCheck(request);
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
        return service.checkEnvoy(check, options.semantics(), options.quotaMode())
                .thenApply(r -> {
                    try {
                        return RlsResponses.of(
                                request,
                                r,
                                options,
                                service.metrics().envoyStats(),
                                service.clock().read());
                    } catch (RuntimeException e) {
                        throw ServiceException.of(e);
                    }
                });
    }

    private CheckRequest toCheck(RateLimitRequest request) {
        if (request.getDescriptorsCount() > service.maxDescriptors()) {
            throw new BadRequestException(
                    "too-many-descriptors",
                    request.getDescriptorsCount() + " descriptors in one request: at most " + service.maxDescriptors()
                            + " (--max-descriptors)");
        }
        long requestHits = request.getHitsAddend() == 0 ? 1 : Integer.toUnsignedLong(request.getHitsAddend());
        List<CheckRequest.Descriptor> ds = new ArrayList<>(request.getDescriptorsCount());
        for (int i = 0; i < request.getDescriptorsCount(); i++) {
            RateLimitDescriptor d = request.getDescriptors(i);
            List<Entry> entries = new ArrayList<>(d.getEntriesCount());
            for (int j = 0; j < d.getEntriesCount(); j++) {
                RateLimitDescriptor.Entry e = d.getEntries(j);
                if (e.getKey().isEmpty()) {
                    throw new BadRequestException(
                            "invalid-entry", "descriptors[" + i + "].entries[" + j + "].key is empty");
                }
                entries.add(new Entry(e.getKey(), e.getValue()));
            }
            long hits = requestHits;
            if (d.hasHitsAddend()) {
                // any uint64: more than a limit holds is over it (a value past 2^63 is as over as 2^63 - 1)
                hits = d.getHitsAddend().getValue() < 0
                        ? Long.MAX_VALUE
                        : d.getHitsAddend().getValue();
            }
            if (d.hasLimit()) {
                RateLimitDescriptor.RateLimitOverride o = d.getLimit();
                ds.add(new CheckRequest.Descriptor(List.copyOf(entries), hits, override(o, i), overrideUnit(o, i)));
            } else {
                ds.add(new CheckRequest.Descriptor(List.copyOf(entries), hits, null));
            }
        }
        return new CheckRequest(request.getDomain(), ds);
    }

    private static String overrideUnit(RateLimitDescriptor.RateLimitOverride o, int i) {
        try {
            return RateUnit.fromConfigName(o.getUnit().name()).configName();
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(
                    "invalid-limit",
                    "descriptors[" + i + "].limit.unit " + o.getUnit()
                            + " is not a unit: use SECOND, MINUTE, HOUR, DAY, WEEK, MONTH or YEAR");
        }
    }

    /** The caller's limit, or null for 0 requests per unit (every hit over, as envoy). */
    private static @Nullable Limit override(RateLimitDescriptor.RateLimitOverride o, int i) {
        RateUnit unit = RateUnit.fromConfigName(overrideUnit(o, i));
        if (o.getRequestsPerUnit() == 0) {
            return null;
        }
        try {
            return LimitSpec.of(Algorithm.FIXED_WINDOW, Integer.toUnsignedLong(o.getRequestsPerUnit()), unit)
                    .toLimit();
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("invalid-limit", "descriptors[" + i + "].limit: " + e.getMessage());
        }
    }
}
