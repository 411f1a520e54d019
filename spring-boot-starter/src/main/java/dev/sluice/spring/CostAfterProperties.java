package dev.sluice.spring;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A rule's cost known only when the response ends ({@code sluice.rules[N].cost-after.*}): each request is reserved
 * at the estimate before it goes on and settled on the actual cost the application reports, in a request attribute
 * or a response header, when its response ends.
 *
 * <pre>
 * sluice:
 *   rules:
 *     - name: tokens
 *       key: header:X-Api-Key
 *       requests_per_unit: 10000
 *       unit: minute
 *       algorithm: token_bucket
 *       cost-after:
 *         estimate: 500
 *         header: X-Tokens-Used
 * </pre>
 */
public class CostAfterProperties {
    /** Permits reserved before the request goes on (what a request is expected to use). */
    private @Nullable Long estimate;

    /** A request header carrying the estimate (for example X-Max-Tokens); "estimate" when absent. */
    private @Nullable String estimateHeader;

    /** The request attribute the application sets to the actual cost (a number); read first. */
    private String attribute = dev.sluice.servlet.CostAfter.DEFAULT_ATTRIBUTE;

    /** A response header carrying the actual cost (for example X-Tokens-Used); read when the attribute is absent. */
    private @Nullable String header;

    /** How long a reservation stays pending if its settle never comes (then its estimate stands). */
    private Duration settleWithin = dev.sluice.Settlement.DEFAULT_SETTLE_WITHIN;

    public @Nullable Long getEstimate() {
        return estimate;
    }

    public void setEstimate(@Nullable Long estimate) {
        this.estimate = estimate;
    }

    public @Nullable String getEstimateHeader() {
        return estimateHeader;
    }

    public void setEstimateHeader(@Nullable String estimateHeader) {
        this.estimateHeader = estimateHeader;
    }

    public String getAttribute() {
        return attribute;
    }

    public void setAttribute(String attribute) {
        this.attribute = attribute;
    }

    public @Nullable String getHeader() {
        return header;
    }

    public void setHeader(@Nullable String header) {
        this.header = header;
    }

    public Duration getSettleWithin() {
        return settleWithin;
    }

    public void setSettleWithin(Duration settleWithin) {
        this.settleWithin = settleWithin;
    }
}
