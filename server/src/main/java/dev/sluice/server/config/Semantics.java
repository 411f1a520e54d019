package dev.sluice.server.config;

/**
 * How the Envoy APIs (gRPC {@code ShouldRateLimit} and {@code POST /json}) count. {@code POST /v1/check} is always
 * {@link #STRICT}.
 *
 * <ul>
 *   <li>{@link #ENVOY} (the default on the Envoy APIs): as envoyproxy/ratelimit does by default. Every hit is
 *       counted, denied ones too, and each descriptor of a request is counted on its own: one over its limit does
 *       not stop the others from being counted.</li>
 *   <li>{@link #STRICT}: Sluice's own. A denied call consumes nothing, and the descriptors of one request are
 *       all-or-nothing: when one is over its limit, none is counted.</li>
 * </ul>
 * Set service-wide with {@code sluice serve --semantics} and per domain with {@code semantics:} beside
 * {@code domain:} in a rules file.
 */
public enum Semantics {
    ENVOY,
    STRICT;

    public String configName() {
        return ConfigNames.of(this);
    }

    /** Parses {@code envoy} or {@code strict} (any case). */
    public static Semantics fromConfigName(String s) {
        Semantics m = ConfigNames.find(values(), s);
        if (m != null) {
            return m;
        }
        throw new IllegalArgumentException("unknown semantics '" + s + "': use envoy (count every hit, each descriptor"
                + " on its own) or strict (denied calls consume nothing, descriptors all-or-nothing)");
    }
}
