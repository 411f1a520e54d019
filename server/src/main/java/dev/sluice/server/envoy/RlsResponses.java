package dev.sluice.server.envoy;

import com.google.protobuf.Duration;
import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.RateUnit;
import dev.sluice.server.config.Rule;
import dev.sluice.server.decision.CheckResult;
import dev.sluice.server.decision.RateLimitHeaders;
import dev.sluice.server.stats.EnvoyStats;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@link RlsService}'s answer, field by field as envoyproxy/ratelimit's: each descriptor's status, the response
 * headers {@link EnvoyOptions#headers()} asks for, the dynamic metadata, and what a degraded decision adds.
 */
final class RlsResponses {
    private static final long MAX_UINT32 = 0xFFFF_FFFFL;

    private RlsResponses() {}

    /**
     * The answer, field by field as envoyproxy/ratelimit's ({@code ratelimit.go}, {@code base_limiter.go}). With
     * envoy's global shadow mode ({@link EnvoyOptions#shadowMode()}) an answer over the limit is OK overall, its
     * statuses as they are, and counted in {@code stats} ({@code ratelimit.service.global_shadow_mode}), as envoy's
     * {@code shouldRateLimitWorker} does last.
     *
     * @param nowNanos the service's clock, for the time to a fixed window's end
     */
    static RateLimitResponse of(
            RateLimitRequest request, CheckResult r, EnvoyOptions options, EnvoyStats stats, long nowNanos) {
        boolean over = !r.allowed();
        if (over && options.shadowMode()) {
            over = false;
            stats.globalShadowMode();
        }
        RateLimitResponse.Builder b = RateLimitResponse.newBuilder()
                .setOverallCode(over ? RateLimitResponse.Code.OVER_LIMIT : RateLimitResponse.Code.OK);
        // envoy's headers describe one descriptor: the first over its limit (not in quota mode), else the one
        // with the least remaining
        RateLimitResponse.DescriptorStatus closest = null;
        Rule closestRule = null;
        long closestRemaining = MAX_UINT32;
        for (CheckResult.Status s : r.statuses()) {
            RateLimitResponse.DescriptorStatus st = status(s, nowNanos);
            b.addStatuses(st);
            if (st.hasCurrentLimit() && Integer.toUnsignedLong(st.getLimitRemaining()) < closestRemaining) {
                closest = st;
                closestRule = s.rule();
                closestRemaining = Integer.toUnsignedLong(st.getLimitRemaining());
            }
            if (s.code() == CheckResult.Code.OVER_LIMIT && !options.quotaMode() && !quotaMode(s.rule())) {
                closest = st;
                closestRule = s.rule();
                closestRemaining = 0;
            }
        }
        switch (options.headers()) {
            case NONE -> {}
            case ENVOY -> {
                if (closest != null) {
                    header(
                            b,
                            "RateLimit-Limit",
                            Integer.toUnsignedString(closest.getCurrentLimit().getRequestsPerUnit()));
                    header(b, "RateLimit-Remaining", Integer.toUnsignedString(closest.getLimitRemaining()));
                    header(b, "RateLimit-Reset", Long.toString(windowEndSeconds(closestRule, nowNanos)));
                }
            }
            case IETF -> RateLimitHeaders.of(r).forEach((k, v) -> header(b, k, v));
            default -> throw new IllegalStateException("unknown headers option " + options.headers());
        }
        Degradation degraded = r.degradation();
        if (degraded != Degradation.NONE && options.headers() != EnvoyOptions.Headers.IETF) {
            header(b, RateLimitHeaders.DEGRADED, degraded.label());
        }
        Struct.Builder meta = options.dynamicMetadata() ? metadata(request, r) : null;
        if (degraded != Degradation.NONE) {
            // Envoy puts this under the filter's namespace (envoy.filters.http.ratelimit): access logs can show it
            // as %DYNAMIC_METADATA(envoy.filters.http.ratelimit:degraded)%
            meta = meta == null ? Struct.newBuilder() : meta;
            meta.putFields(
                    "degraded",
                    Value.newBuilder().setStringValue(degraded.label()).build());
        }
        if (meta != null) {
            b.setDynamicMetadata(meta);
        }
        return b.build();
    }

    private static RateLimitResponse.DescriptorStatus status(CheckResult.Status s, long nowNanos) {
        RateLimitResponse.DescriptorStatus.Builder st = RateLimitResponse.DescriptorStatus.newBuilder()
                .setCode(
                        s.code() == CheckResult.Code.OK
                                ? RateLimitResponse.Code.OK
                                : RateLimitResponse.Code.OVER_LIMIT);
        Rule rule = s.rule();
        if (rule == null) {
            return st.build(); // no rule (or replaced): OK, nothing else, as envoy
        }
        if (rule.kind() == Rule.Kind.UNLIMITED) {
            return st.setLimitRemaining((int) MAX_UINT32).build();
        }
        RateLimitResponse.RateLimit.Builder limit = RateLimitResponse.RateLimit.newBuilder()
                .setRequestsPerUnit((int) Math.min(MAX_UINT32, rule.requestsPerUnit()))
                .setUnit(unit(rule.unit()));
        if (rule.name() != null) {
            limit.setName(rule.name());
        }
        st.setCurrentLimit(limit);
        Decision d = s.decision();
        boolean over = (d != null && d.denied()) || s.code() == CheckResult.Code.OVER_LIMIT;
        if (!over && d != null) {
            st.setLimitRemaining((int) Math.min(MAX_UINT32, Math.max(0, d.remaining())));
        }
        long reset = rule.algorithm() == Algorithm.FIXED_WINDOW
                ? windowEndSeconds(rule, nowNanos)
                : d == null ? 0 : ceilSeconds(d.resetAfterNanos());
        return st.setDurationUntilReset(Duration.newBuilder().setSeconds(reset)).build();
    }

    /** Whole seconds to the end of a fixed window aligned to the epoch: envoy's {@code CalculateReset}. */
    private static long windowEndSeconds(@Nullable Rule rule, long nowNanos) {
        if (rule == null || rule.window() == null) {
            return 0;
        }
        long w = rule.window().toNanos();
        return ceilSeconds(w - Math.floorMod(nowNanos, w));
    }

    private static long ceilSeconds(long nanos) {
        return nanos <= 0 ? 0 : (nanos + 999_999_999L) / 1_000_000_000L;
    }

    private static boolean quotaMode(@Nullable Rule rule) {
        return rule != null && rule.quotaMode();
    }

    private static void header(RateLimitResponse.Builder b, String key, String value) {
        b.addResponseHeadersToAdd(HeaderValue.newBuilder().setKey(key).setValue(value));
    }

    /**
     * envoy's {@code ratelimitToMetadata}: the domain, each descriptor ({@code entries} as {@code "key=value"},
     * {@code limit} and {@code hitsAddend} when sent), the request's {@code hitsAddend} when set, and the merged
     * {@code metadata:} of the rules whose descriptors passed.
     */
    private static Struct.Builder metadata(RateLimitRequest request, CheckResult r) {
        Struct.Builder m = Struct.newBuilder();
        m.putFields(
                "domain", Value.newBuilder().setStringValue(request.getDomain()).build());
        ListValue.Builder descriptors = ListValue.newBuilder();
        for (RateLimitDescriptor d : request.getDescriptorsList()) {
            Struct.Builder ds = Struct.newBuilder();
            ListValue.Builder entries = ListValue.newBuilder();
            for (RateLimitDescriptor.Entry e : d.getEntriesList()) {
                entries.addValues(Value.newBuilder().setStringValue(e.getKey() + "=" + e.getValue()));
            }
            ds.putFields("entries", Value.newBuilder().setListValue(entries).build());
            if (d.hasLimit()) {
                // Go's compact text form of the message, as envoy's descriptor.Limit.String()
                ds.putFields(
                        "limit",
                        Value.newBuilder()
                                .setStringValue("requests_per_unit:"
                                        + Integer.toUnsignedString(d.getLimit().getRequestsPerUnit()) + " unit:"
                                        + d.getLimit().getUnit().name())
                                .build());
            }
            if (d.hasHitsAddend()) {
                ds.putFields(
                        "hitsAddend",
                        Value.newBuilder()
                                .setNumberValue((double) d.getHitsAddend().getValue())
                                .build());
            }
            descriptors.addValues(Value.newBuilder().setStructValue(ds));
        }
        m.putFields("descriptors", Value.newBuilder().setListValue(descriptors).build());
        if (request.getHitsAddend() != 0) {
            m.putFields(
                    "hitsAddend",
                    Value.newBuilder()
                            .setNumberValue((double) Integer.toUnsignedLong(request.getHitsAddend()))
                            .build());
        }
        Struct.Builder passed = Struct.newBuilder();
        for (CheckResult.Status s : r.statuses()) {
            // envoy's "passed": limited descriptors answered OK (not unlimited, not unmatched, not replaced)
            if (s.code() == CheckResult.Code.OK && s.rule() != null && s.rule().kind() != Rule.Kind.UNLIMITED) {
                merge(passed, ruleMetadata(s.rule()));
            }
        }
        if (passed.getFieldsCount() > 0) {
            m.putFields("metadata", Value.newBuilder().setStructValue(passed).build());
        }
        return m;
    }

    /** A rule's {@code metadata:} as the protobuf Struct envoy makes of it ({@code structpb.NewStruct}). */
    private static @Nullable Struct ruleMetadata(Rule rule) {
        return rule.metadata() == null ? null : struct(rule.metadata());
    }

    private static Struct struct(Map<String, Object> map) {
        Struct.Builder b = Struct.newBuilder();
        map.forEach((k, v) -> b.putFields(k, value(v)));
        return b.build();
    }

    @SuppressWarnings("unchecked")
    private static Value value(Object v) {
        Value.Builder b = Value.newBuilder();
        if (v == null) {
            b.setNullValue(NullValue.NULL_VALUE);
        } else if (v instanceof String s) {
            b.setStringValue(s);
        } else if (v instanceof Boolean bool) {
            b.setBoolValue(bool);
        } else if (v instanceof Number n) {
            b.setNumberValue(n.doubleValue()); // a Struct number is a double, as in envoy
        } else if (v instanceof Map<?, ?> m) {
            b.setStructValue(struct((Map<String, Object>) m));
        } else if (v instanceof List<?> list) {
            ListValue.Builder l = ListValue.newBuilder();
            list.forEach(x -> l.addValues(value(x)));
            b.setListValue(l);
        } else {
            b.setStringValue(v.toString());
        }
        return b.build();
    }

    /** envoy's {@code mergeMetadata}: new keys are added, structs merged recursively, the first value kept. */
    private static void merge(Struct.Builder dest, @Nullable Struct src) {
        if (src == null) {
            return;
        }
        for (Map.Entry<String, Value> e : src.getFieldsMap().entrySet()) {
            Value have = dest.getFieldsMap().get(e.getKey());
            if (have == null) {
                dest.putFields(e.getKey(), e.getValue());
            } else if (have.hasStructValue() && e.getValue().hasStructValue()) {
                Struct.Builder inner = have.getStructValue().toBuilder();
                merge(inner, e.getValue().getStructValue());
                dest.putFields(
                        e.getKey(), Value.newBuilder().setStructValue(inner).build());
            }
        }
    }

    /** Envoy's unit of the same name; UNKNOWN for a Sluice {@code window} that is no envoy unit. */
    private static RateLimitResponse.RateLimit.Unit unit(@Nullable String unit) {
        if (unit == null) {
            return RateLimitResponse.RateLimit.Unit.UNKNOWN;
        }
        return RateLimitResponse.RateLimit.Unit.valueOf(
                RateUnit.fromConfigName(unit).name());
    }
}
