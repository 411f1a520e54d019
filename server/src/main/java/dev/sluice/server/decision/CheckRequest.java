package dev.sluice.server.decision;

import dev.sluice.Limit;
import dev.sluice.server.config.DomainRules.Entry;
import java.util.List;

/**
 * One decision request, protocol-neutral: what {@code POST /v1/check} and {@code ShouldRateLimit} both become.
 *
 * @param domain      the rules domain
 * @param descriptors the descriptors to limit on, all or nothing
 */
public record CheckRequest(String domain, List<Descriptor> descriptors) {

    /**
     * @param entries  the descriptor's key/value pairs, in order
     * @param hits     permits this request spends on the matched rule; 0 = check only, consume nothing
     * @param override a limit sent by the caller instead of the configured rule (envoy's descriptor
     *                 {@code limit}; {@code dev.sluice.client.RemoteRateLimiter} sends its limits this
     *                 way), or null
     */
    public record Descriptor(List<Entry> entries, long hits, Limit override) {
    }
}
