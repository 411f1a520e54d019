package dev.sluice.server.decision;

import dev.sluice.Limit;
import dev.sluice.server.config.DomainRules.Entry;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One decision request, protocol-neutral: what {@code POST /v1/check} and {@code ShouldRateLimit} both become.
 *
 * @param domain      the rules domain
 * @param descriptors the descriptors to limit on, all or nothing
 */
public record CheckRequest(String domain, List<Descriptor> descriptors) {

    /**
     * One descriptor of the request.
     *
     * @param entries      the descriptor's key/value pairs, in order
     * @param hits         permits this request spends on the matched rule; 0 = check only, consume nothing
     * @param override     a limit sent by the caller instead of the configured rule (envoy's descriptor
     *                     {@code limit}; {@code dev.sluice.client.RemoteRateLimiter} sends its limits this
     *                     way), or null
     * @param overrideUnit envoy's unit of a caller-sent limit ({@code second} … {@code year}), reported back in
     *                     {@code current_limit}, or null; with a null {@code override} it stands for a limit of
     *                     0 requests per that unit (envoy blocks every hit)
     */
    public record Descriptor(
            List<Entry> entries,
            long hits,
            @Nullable Limit override,
            @Nullable String overrideUnit) {
        public Descriptor(List<Entry> entries, long hits, @Nullable Limit override) {
            this(entries, hits, override, null);
        }

        /** True when the caller sent a limit (possibly of 0 requests). */
        public boolean overridden() {
            return override != null || overrideUnit != null;
        }
    }
}
