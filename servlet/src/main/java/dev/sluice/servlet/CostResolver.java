package dev.sluice.servlet;

import jakarta.servlet.http.HttpServletRequest;

/**
 * How many permits a request spends under a rule: a fixed number, or one computed from the request (a batch
 * size, a query's weight). A cost below 1 or above the limit's capacity is answered 400 with a problem body
 * naming the cost, since such a request could never be granted.
 */
@FunctionalInterface
public interface CostResolver {

    /** The cost of {@code request}. */
    long cost(HttpServletRequest request);

    /** Every request costs {@code permits}. */
    static CostResolver fixed(long permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("cost " + permits + " must be at least 1");
        }
        return request -> permits;
    }

    /**
     * The integer in header {@code name}, or {@code fallback} when it is absent. A value that is not an integer
     * counts as 0, which the filter rejects with 400.
     */
    static CostResolver fromHeader(String name, long fallback) {
        return request -> {
            String v = request.getHeader(name);
            if (v == null) {
                return fallback;
            }
            try {
                return v.length() > 18 ? 0 : Long.parseLong(v.strip());
            } catch (NumberFormatException e) {
                return 0;
            }
        };
    }
}
