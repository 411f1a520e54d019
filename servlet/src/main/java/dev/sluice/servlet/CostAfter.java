package dev.sluice.servlet;

import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A rule's cost known only when the response ends (LLM tokens, bytes, rows scanned): the filter reserves an
 * estimate before the request goes on ({@link RateLimiter#tryAcquireEstimate}) and settles it on the actual cost
 * when the response ends ({@link RateLimiter#settle}), charging the difference or giving back the unspent part.
 *
 * <p>The actual cost is read, in this order, from the request attribute {@link #attribute(String)} (default
 * {@value #DEFAULT_ATTRIBUTE}: a {@link Number} or a decimal string, set by the application anywhere before the
 * response ends, also after it is committed, as a streaming response must), then from the response header {@link
 * #header(String)} (none by default: a header must be set before the response is committed, so it suits responses
 * that are not streamed). When neither is there, or the value is not a whole number from 0 up, the estimate stands
 * (settled at the estimate: nothing is left pending). An actual above the limit's capacity is settled at the
 * capacity, the most a settle can charge.
 *
 * <pre>{@code
 * RateLimitRule.named("tokens")
 *     .key(KeyResolver.header("X-Api-Key"))
 *     .limit(Limit.tokenBucket(10_000, Rate.perMinute(10_000)))
 *     .costAfter(CostAfter.estimate(500).header("X-Tokens-Used"))
 *     .build();
 * }</pre>
 */
public final class CostAfter {
    /** The request attribute the application sets to the actual cost, unless {@link #attribute} names another. */
    public static final String DEFAULT_ATTRIBUTE = "sluice.actual-cost";

    private final CostResolver estimate;
    private final long fixedEstimate;
    private final String attribute;
    private final @Nullable String header;
    private final Duration settleWithin;

    private CostAfter(
            CostResolver estimate,
            long fixedEstimate,
            String attribute,
            @Nullable String header,
            Duration settleWithin) {
        this.estimate = estimate;
        this.fixedEstimate = fixedEstimate;
        this.attribute = attribute;
        this.header = header;
        this.settleWithin = settleWithin;
    }

    /** Every request is reserved at {@code permits} (at least 1) before it goes on. */
    public static CostAfter estimate(long permits) {
        return new CostAfter(
                CostResolver.fixed(permits), permits, DEFAULT_ATTRIBUTE, null, Settlement.DEFAULT_SETTLE_WITHIN);
    }

    /** The estimate comes from the request (a {@code max_tokens} header, a declared size). */
    public static CostAfter estimate(CostResolver resolver) {
        return new CostAfter(
                Objects.requireNonNull(resolver, "estimate resolver"),
                0,
                DEFAULT_ATTRIBUTE,
                null,
                Settlement.DEFAULT_SETTLE_WITHIN);
    }

    /** The request attribute the application sets to the actual cost; default {@value #DEFAULT_ATTRIBUTE}. */
    public CostAfter attribute(String name) {
        return new CostAfter(estimate, fixedEstimate, checkName("attribute", name), header, settleWithin);
    }

    /** The response header carrying the actual cost (e.g. {@code X-Tokens-Used}), read after the attribute. */
    public CostAfter header(String name) {
        return new CostAfter(estimate, fixedEstimate, attribute, checkName("header", name), settleWithin);
    }

    /**
     * How long a reservation may stay pending if the settle never comes (the process died): then the estimate
     * stands. Default {@link Settlement#DEFAULT_SETTLE_WITHIN}; at most {@link Settlement#MAX_SETTLE_WITHIN}.
     */
    public CostAfter settleWithin(Duration within) {
        Settlement.checkWithin("settleWithin", within);
        return new CostAfter(estimate, fixedEstimate, attribute, header, within);
    }

    public CostResolver estimate() {
        return estimate;
    }

    /** The fixed estimate, or 0 when it comes from the request. */
    long fixedEstimate() {
        return fixedEstimate;
    }

    public String attribute() {
        return attribute;
    }

    public @Nullable String header() {
        return header;
    }

    public Duration settleWithin() {
        return settleWithin;
    }

    /**
     * The actual cost the application reported, or -1 when it reported none (or nothing readable as a whole number
     * from 0 up).
     */
    long actual(HttpServletRequest request, HttpServletResponse response) {
        Object a = request.getAttribute(attribute);
        return parseActual(a != null ? a : header == null ? null : response.getHeader(header));
    }

    /**
     * An actual cost as the application reports it (a {@link Number}, or a decimal string in an attribute or a
     * header), or -1 when it reported none or nothing readable as a whole number from 0 up.
     */
    public static long parseActual(@Nullable Object reported) {
        if (reported instanceof Number n) {
            return Math.max(-1, n.longValue());
        }
        String v = reported == null ? null : reported.toString().strip();
        if (v == null || v.isEmpty() || v.length() > 18) {
            return -1;
        }
        try {
            return Math.max(-1, Long.parseLong(v));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String checkName(String what, String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("cost-after " + what + " name '" + name + "' is empty: name the " + what
                    + " carrying the actual cost, e.g. "
                    + (what.equals("header") ? "X-Tokens-Used" : DEFAULT_ATTRIBUTE));
        }
        return name.strip();
    }

    @Override
    public String toString() {
        return "cost after (estimate " + (fixedEstimate > 0 ? Long.toString(fixedEstimate) : "from the request")
                + ", actual from attribute '" + attribute + "'"
                + (header == null ? "" : " or header '" + header.toLowerCase(Locale.ROOT) + "'") + ")";
    }
}
