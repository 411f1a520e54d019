package dev.sluice.server.envoy;

import dev.sluice.server.config.ConfigNames;
import dev.sluice.server.config.Semantics;

/**
 * How the Envoy APIs (gRPC {@code ShouldRateLimit} and {@code POST /json}) answer, beyond the rules.
 *
 * @param semantics       the service-wide default; a rules file may set its own per domain ({@code semantics:})
 * @param headers         what goes into {@code response_headers_to_add}
 * @param dynamicMetadata envoy's {@code RESPONSE_DYNAMIC_METADATA}: {@code dynamic_metadata} carries the domain,
 *                        the descriptors, the request's hits_addend and the {@code metadata:} of the rules that passed
 * @param shadowMode      envoy's global {@code SHADOW_MODE}: a request whose overall code would be OVER_LIMIT is
 *                        answered OK (its descriptors' statuses stay as they are) and counted in envoy's
 *                        {@code ratelimit.service.global_shadow_mode}
 * @param quotaMode       envoy's global {@code QUOTA_MODE}: every descriptor is a quota descriptor (as if each rule
 *                        said {@code quota_mode: true}), so a request is over only when every descriptor not unlimited
 *                        is over. Counting is envoy's: with {@link Semantics#STRICT} (all or nothing) it is refused
 */
public record EnvoyOptions(
        Semantics semantics, Headers headers, boolean dynamicMetadata, boolean shadowMode, boolean quotaMode) {

    public EnvoyOptions {
        if (quotaMode && semantics == Semantics.STRICT) {
            throw new IllegalArgumentException("--quota-mode (envoy's QUOTA_MODE) cannot go with --semantics strict "
                    + "(envoy's STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT): strict answers all or nothing, so a "
                    + "request with a descriptor over its limit would be answered OK having taken nothing; drop one "
                    + "of them");
        }
    }

    /** Without envoy's global shadow and quota modes. */
    public EnvoyOptions(Semantics semantics, Headers headers, boolean dynamicMetadata) {
        this(semantics, headers, dynamicMetadata, false, false);
    }

    /** envoyproxy/ratelimit's defaults: count every hit, no headers, no dynamic metadata, no global modes. */
    public static EnvoyOptions defaults() {
        return new EnvoyOptions(Semantics.ENVOY, Headers.NONE, false);
    }

    /** The {@code response_headers_to_add} of an answer. */
    public enum Headers {
        /** None (envoy's default). */
        NONE,
        /** envoy's {@code LIMIT_RESPONSE_HEADERS_ENABLED=true}: {@code RateLimit-Limit}, {@code RateLimit-Remaining},
         *  {@code RateLimit-Reset} of the descriptor closest to its limit. */
        ENVOY,
        /** Sluice's: {@code RateLimit}, {@code RateLimit-Policy} (IETF draft) and, when denied, {@code Retry-After}. */
        IETF;

        public String configName() {
            return ConfigNames.of(this);
        }

        public static Headers fromConfigName(String s) {
            Headers h = ConfigNames.find(values(), s);
            if (h != null) {
                return h;
            }
            throw new IllegalArgumentException("unknown response headers '" + s + "': use none, envoy "
                    + "(RateLimit-Limit/-Remaining/-Reset) or ietf (RateLimit, RateLimit-Policy, Retry-After)");
        }
    }
}
