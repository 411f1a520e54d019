package dev.sluice.server.envoy;

import com.google.protobuf.UInt64Value;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.RateUnit;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.Rule;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.CheckRequest;
import dev.sluice.server.decision.CheckResult;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.RateLimitHeaders;
import dev.sluice.server.decision.StoreUnavailableException;
import dev.sluice.server.decision.UnsupportedByStoreException;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Envoy's {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}, answered by the same
 * {@link DecisionService} as HTTP, so an Envoy (or Istio, Contour, Gloo) configured for envoyproxy/ratelimit can
 * point at Sluice unchanged.
 *
 * <ul>
 *   <li>{@code hits_addend} on the request: 0 means 1 (proto3 cannot tell unset from 0; envoy does the same);
 *       on a descriptor ({@code UInt64Value}) it overrides the request's, and an explicit 0 means check only:
 *       {@code RateLimiter.peek} with cost 1, nothing taken, OVER_LIMIT when the next request would be denied
 *       (envoy answers OK at exactly the limit; see {@link DecisionService});</li>
 *   <li>a descriptor's {@code limit} override is used instead of the configured rule, as envoyproxy/ratelimit does;</li>
 *   <li>each status carries {@code current_limit} (rule name or id, requests_per_unit, unit — UNKNOWN for a
 *       Sluice {@code window} that is no envoy unit), {@code limit_remaining} (saturated to 2³²−1; unlimited rules
 *       report 2³²−1 like envoy) and {@code duration_until_reset};</li>
 *   <li>{@code response_headers_to_add} carries {@code RateLimit}, {@code RateLimit-Policy}, when over the
 *       limit {@code Retry-After}, and when the failure policy decided instead of the store
 *       {@code Sluice-Degraded: <cause>} (see {@link RateLimitHeaders}); {@code dynamic_metadata} then carries
 *       {@code degraded: <cause>} too;</li>
 *   <li>bad input is {@code INVALID_ARGUMENT}; a store that is down or slow does not fail the call: the failure
 *       policy answers ({@code sluice serve --failure-policy}). {@code UNAVAILABLE} remains for a service whose
 *       store pool is full or past its own deadline (Envoy's {@code failure_mode_deny} then decides); a check-only
 *       descriptor on a store without peek is {@code UNIMPLEMENTED}; never a stack trace.</li>
 * </ul>
 */
public final class RlsService extends RateLimitServiceGrpc.RateLimitServiceImplBase {
    private static final Logger log = LoggerFactory.getLogger(RlsService.class);
    private static final long MAX_UINT32 = 0xFFFF_FFFFL;

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
        decide(request).whenComplete((resp, t) -> {
            if (t == null) {
                service.metrics().timer(true).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                out.onNext(resp);
                out.onCompleted();
            } else {
                out.onError(t instanceof CompletionException ? t.getCause() : t);
            }
        });
    }

    /**
     * Decides one request: the answer, or a {@link StatusRuntimeException} carrying the gRPC status of the failure
     * ({@code INVALID_ARGUMENT}, {@code UNAVAILABLE}, {@code UNIMPLEMENTED}, {@code INTERNAL}), already counted and
     * logged. Shared by gRPC and {@code POST /json}.
     */
    public CompletableFuture<RateLimitResponse> decide(RateLimitRequest request) {
        CheckRequest check;
        try {
            check = toCheck(request);
        } catch (BadRequestException e) {
            service.metrics().rejected(e.type());
            return CompletableFuture.failedFuture(
                    Status.INVALID_ARGUMENT.withDescription(e.type() + ": " + e.getMessage()).asRuntimeException());
        }
        return service.check(check).handle((r, t) -> {
            if (t == null) {
                try {
                    return toResponse(r);
                } catch (RuntimeException e) {
                    log.error("event=internal_error protocol=grpc", e);
                    throw Status.INTERNAL.withDescription("the service failed to answer; the cause is in its log")
                            .asRuntimeException();
                }
            }
            throw failure(t instanceof CompletionException ? t.getCause() : t);
        });
    }

    private StatusRuntimeException failure(Throwable c) {
        if (c instanceof BadRequestException b) {
            service.metrics().rejected(b.type());
            return Status.INVALID_ARGUMENT.withDescription(b.type() + ": " + b.getMessage()).asRuntimeException();
        } else if (c instanceof StoreUnavailableException s) {
            if (service.logThrottle().allow(s.type())) {
                log.warn("event=store_unavailable protocol=grpc type={} detail=\"{}\" suppressed_since_last={}",
                        s.type(), s.getMessage(), service.logThrottle().suppressedSinceLast());
            }
            return Status.UNAVAILABLE.withDescription(s.type() + ": " + s.getMessage()).asRuntimeException();
        } else if (c instanceof UnsupportedByStoreException u) {
            service.metrics().rejected(u.type());
            return Status.UNIMPLEMENTED.withDescription(u.type() + ": " + u.getMessage()).asRuntimeException();
        }
        log.error("event=internal_error protocol=grpc", c);
        return Status.INTERNAL.withDescription("the service failed to answer; the cause is in its log")
                .asRuntimeException();
    }

    private CheckRequest toCheck(RateLimitRequest request) {
        if (request.getDescriptorsCount() > service.maxDescriptors()) {
            throw new BadRequestException("too-many-descriptors", request.getDescriptorsCount()
                    + " descriptors in one request: at most " + service.maxDescriptors() + " (--max-descriptors)");
        }
        long requestHits = request.getHitsAddend() == 0 ? 1 : Integer.toUnsignedLong(request.getHitsAddend());
        List<CheckRequest.Descriptor> ds = new ArrayList<>(request.getDescriptorsCount());
        for (int i = 0; i < request.getDescriptorsCount(); i++) {
            RateLimitDescriptor d = request.getDescriptors(i);
            List<Entry> entries = new ArrayList<>(d.getEntriesCount());
            for (int j = 0; j < d.getEntriesCount(); j++) {
                RateLimitDescriptor.Entry e = d.getEntries(j);
                if (e.getKey().isEmpty()) {
                    throw new BadRequestException("invalid-entry", "descriptors[" + i + "].entries[" + j + "].key is empty");
                }
                entries.add(new Entry(e.getKey(), e.getValue()));
            }
            long hits = requestHits;
            if (d.hasHitsAddend()) {
                UInt64Value h = d.getHitsAddend();
                hits = h.getValue();
                if (hits < 0 || hits > Integer.MAX_VALUE) {
                    throw new BadRequestException("invalid-hits", "descriptors[" + i + "].hits_addend "
                            + Long.toUnsignedString(h.getValue()) + " is too large");
                }
            }
            Limit override = null;
            if (d.hasLimit()) {
                override = override(d.getLimit(), i);
            }
            ds.add(new CheckRequest.Descriptor(List.copyOf(entries), hits, override));
        }
        return new CheckRequest(request.getDomain(), ds);
    }

    private static Limit override(RateLimitDescriptor.RateLimitOverride o, int i) {
        RateUnit unit;
        try {
            unit = RateUnit.fromConfigName(o.getUnit().name());
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("invalid-limit", "descriptors[" + i + "].limit.unit " + o.getUnit()
                    + " is not a unit: use SECOND … YEAR");
        }
        if (o.getRequestsPerUnit() == 0) {
            throw new BadRequestException("invalid-limit", "descriptors[" + i
                    + "].limit.requests_per_unit is 0: a limit override must admit at least 1");
        }
        try {
            return LimitSpec.of(Algorithm.FIXED_WINDOW, Integer.toUnsignedLong(o.getRequestsPerUnit()), unit).toLimit();
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("invalid-limit", "descriptors[" + i + "].limit: " + e.getMessage());
        }
    }

    static RateLimitResponse toResponse(CheckResult r) {
        RateLimitResponse.Builder b = RateLimitResponse.newBuilder()
                .setOverallCode(r.allowed() ? RateLimitResponse.Code.OK : RateLimitResponse.Code.OVER_LIMIT);
        for (CheckResult.Status s : r.statuses()) {
            RateLimitResponse.DescriptorStatus.Builder st = RateLimitResponse.DescriptorStatus.newBuilder()
                    .setCode(s.code() == CheckResult.Code.OK ? RateLimitResponse.Code.OK
                            : RateLimitResponse.Code.OVER_LIMIT);
            Rule rule = s.rule();
            if (rule != null && rule.kind() == Rule.Kind.UNLIMITED) {
                st.setLimitRemaining((int) MAX_UINT32);
            } else if (rule != null) {
                st.setCurrentLimit(RateLimitResponse.RateLimit.newBuilder()
                        .setName(rule.policyName())
                        .setRequestsPerUnit((int) Math.min(MAX_UINT32, rule.requestsPerUnit()))
                        .setUnit(unit(rule.unit())));
                Decision d = s.decision();
                if (d != null) {
                    st.setLimitRemaining((int) Math.min(MAX_UINT32, d.remaining()));
                    long reset = d.resetAfterNanos();
                    st.setDurationUntilReset(com.google.protobuf.Duration.newBuilder()
                            .setSeconds(reset / 1_000_000_000L).setNanos((int) (reset % 1_000_000_000L)));
                }
            }
            b.addStatuses(st);
        }
        RateLimitHeaders.of(r).forEach((k, v) -> b.addResponseHeadersToAdd(HeaderValue.newBuilder().setKey(k).setValue(v)));
        dev.sluice.Degradation degraded = r.degradation();
        if (degraded != dev.sluice.Degradation.NONE) {
            // Envoy puts this under the filter's namespace (envoy.filters.http.ratelimit): access logs can show it
            // as %DYNAMIC_METADATA(envoy.filters.http.ratelimit:degraded)%
            b.setDynamicMetadata(com.google.protobuf.Struct.newBuilder().putFields("degraded",
                    com.google.protobuf.Value.newBuilder().setStringValue(degraded.label()).build()));
        }
        return b.build();
    }

    /** Envoy's unit of the same name; UNKNOWN for a Sluice {@code window} that is no envoy unit. */
    private static RateLimitResponse.RateLimit.Unit unit(String unit) {
        if (unit == null) {
            return RateLimitResponse.RateLimit.Unit.UNKNOWN;
        }
        return RateLimitResponse.RateLimit.Unit.valueOf(RateUnit.fromConfigName(unit).name());
    }
}
