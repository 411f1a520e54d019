package dev.sluice.server.config;

import dev.sluice.Algorithm;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.nodes.Node;

/**
 * {@link RulesParser}'s reading of a descriptor's {@code charge_on_stream_done} and {@code reservation} keys into a
 * {@link StreamDone}, each problem reported with its line ({@link RuleNodes}).
 */
final class StreamDoneNodes {
    static final String CHARGE = "charge_on_stream_done";
    static final String RESERVATION = "reservation";
    static final Set<String> RESERVATION_KEYS = Set.of("id_key", "settle_within");

    private final RuleNodes nodes;

    StreamDoneNodes(RuleNodes nodes) {
        this.nodes = nodes;
    }

    /**
     * The descriptor's stream-done setting, or null for none (or a problem, then reported).
     *
     * @param f    the descriptor's keys
     * @param rule the descriptor's rule, or null when it has no (valid) {@code rate_limit}
     */
    @Nullable
    StreamDone read(Map<String, Node> f, @Nullable Rule rule, boolean hasRateLimit) {
        boolean charge = nodes.bool(f.get(CHARGE), CHARGE);
        Node reservation = f.get(RESERVATION);
        if (!charge && reservation == null) {
            return null;
        }
        String key = charge ? CHARGE : RESERVATION;
        Node at = f.get(key);
        if (charge && reservation != null) {
            nodes.problem(
                    reservation,
                    "'" + CHARGE + "' and '" + RESERVATION + "' on one descriptor: pick one ('" + CHARGE
                            + "' counts the cost the stream end reports; '" + RESERVATION
                            + "' admits on an estimate at the start and settles at the stream end)");
            return null;
        }
        if (!hasRateLimit) {
            nodes.problem(
                    at,
                    "'" + key + "' on a descriptor without 'rate_limit' has no effect: put it beside the rate_limit"
                            + " whose cost is known when the stream ends");
            return null;
        }
        if (rule == null) {
            return null; // the rate_limit's own problems are reported
        }
        if (rule.kind() != Rule.Kind.LIMITED) {
            nodes.problem(
                    at,
                    "'" + key + "' on " + (rule.kind() == Rule.Kind.UNLIMITED ? "an unlimited" : "a blocked")
                            + " rule has nothing to count: remove it, or give the rate_limit 'requests_per_unit' ≥ 1");
            return null;
        }
        if (charge) {
            Algorithm a = rule.limitOfLimited().algorithm();
            if (a == Algorithm.SLIDING_WINDOW || a == Algorithm.SLIDING_LOG) {
                nodes.problem(
                        at,
                        "'" + CHARGE + "' on a " + a.configName() + " rule: a cost counted past the limit of a "
                                + a.configName() + " cannot be charged in full; use algorithm token_bucket, gcra or"
                                + " fixed_window, or settle an estimate with " + RESERVATION + ": {id_key: …}");
                return null;
            }
            return new StreamDone(null, Settlement.DEFAULT_SETTLE_WITHIN);
        }
        Map<String, Node> r =
                reservation == null ? null : nodes.mapping(reservation, "'" + RESERVATION + "'", RESERVATION_KEYS);
        if (reservation == null || r == null) {
            return null;
        }
        String idKey = nodes.string(r.get("id_key"), "id_key");
        if (idKey == null || idKey.isEmpty()) {
            nodes.problem(
                    reservation,
                    "'" + RESERVATION + "' without an 'id_key': name the descriptor entry that carries the request's"
                            + " id, e.g. 'id_key: request_id' (Envoy: a request_headers action on x-request-id)");
            return null;
        }
        Duration within = Settlement.DEFAULT_SETTLE_WITHIN;
        if (r.containsKey("settle_within")) {
            try {
                within = Durations.parse(nodes.string(r.get("settle_within"), "settle_within"));
                Settlement.checkWithin("settle_within", within);
            } catch (IllegalArgumentException e) {
                nodes.problem(r.get("settle_within"), e.getMessage());
                return null;
            }
        }
        return new StreamDone(idKey, within);
    }
}
