package dev.sluice.server.cli;

import picocli.CommandLine.Option;

/** {@code sluice serve}'s options of the Envoy APIs (gRPC {@code ShouldRateLimit}, {@code POST /json}). */
final class EnvoyApiOptions {
    @Option(
            names = "--semantics",
            defaultValue = "envoy",
            paramLabel = "MODE",
            description = "How the Envoy APIs (gRPC, POST /json) count: envoy (every hit, denied ones too, each "
                    + "descriptor on its own, as envoyproxy/ratelimit) or strict (denied calls consume nothing, "
                    + "descriptors all-or-nothing); a rules file may set 'semantics:' per domain; POST /v1/check is "
                    + "always strict (default ${DEFAULT-VALUE})")
    String semantics;

    @Option(
            names = "--rls-response-headers",
            defaultValue = "none",
            paramLabel = "KIND",
            description = "Headers the Envoy APIs ask Envoy to add: none, envoy (RateLimit-Limit, RateLimit-Remaining, "
                    + "RateLimit-Reset, as envoy's LIMIT_RESPONSE_HEADERS_ENABLED) or ietf (RateLimit, "
                    + "RateLimit-Policy, Retry-After) (default ${DEFAULT-VALUE})")
    String rlsResponseHeaders;

    @Option(
            names = "--rls-dynamic-metadata",
            description = "Envoy APIs: answer with dynamic_metadata (domain, descriptors, hitsAddend and the "
                    + "'metadata:' of the rules that passed), as envoy's RESPONSE_DYNAMIC_METADATA")
    boolean rlsDynamicMetadata;

    @Option(
            names = "--shadow-mode",
            arity = "0..1",
            defaultValue = "false",
            fallbackValue = "true",
            paramLabel = "true|false",
            description = "Envoy APIs: answer OK a request that would be over the limit (its descriptors' statuses "
                    + "stay OVER_LIMIT) and count it in envoy's global_shadow_mode stat, as envoy's SHADOW_MODE; "
                    + "POST /v1/check is not affected (default ${DEFAULT-VALUE})")
    boolean shadowMode;

    @Option(
            names = "--quota-mode",
            arity = "0..1",
            defaultValue = "false",
            fallbackValue = "true",
            paramLabel = "true|false",
            description = "Envoy APIs: every descriptor is a quota descriptor (as quota_mode: true on every rule), so "
                    + "a request is over only when all its descriptors are, as envoy's QUOTA_MODE; not with "
                    + "--semantics strict; POST /v1/check is not affected (default ${DEFAULT-VALUE})")
    boolean quotaMode;
}
