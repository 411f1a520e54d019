package dev.sluice.server.decision;

import dev.sluice.Limit;
import dev.sluice.server.config.Rule;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a request asks of the store, worked out before the store is asked: one {@link Item} per descriptor, with
 * its rule, limit, store key and what kind of store call (if any) it needs.
 *
 * @param envoyApi asked on the Envoy APIs (gRPC {@code ShouldRateLimit}, {@code POST /json}), whose descriptors count
 *                 in envoy's stats
 */
record Plan(String metricDomain, List<Item> items, boolean envoyApi) {

    /** What a descriptor needs: nothing (no rule, unlimited, blocked), or a store call of some kind. */
    enum Kind {
        NONE,
        UNLIMITED,
        BLOCKED,
        ENFORCED,
        SHADOW,
        PEEK,
        /** Strict semantics on the Envoy APIs: more hits than the limit's capacity, over without taking anything. */
        OVERSIZED,
        /** A cost reported when the work ended ({@code charge_on_stream_done}): counted in full, answered OK. */
        CHARGE,
        /** A descriptor carrying a reservation id ({@code reservation:}): reserved by its first request, settled by
         *  the next ({@link StreamDoneDecider}). */
        RESERVE
    }

    /** The reservation id a descriptor carries in its {@code id_key} entry, and its rule's {@code settle_within}. */
    record Reservation(String id, Duration settleWithin) {}

    /** What a request asks of the store: decide ({@code /v1/check}, {@code /v1/reserve}), look, or forget. */
    enum Mode {
        DECIDE,
        PEEK,
        RESET,
        /** envoyproxy/ratelimit's counting on the Envoy APIs: every hit counted, each descriptor on its own. */
        ENVOY
    }

    /** One descriptor's part of the plan. */
    record Item(
            Kind kind,
            @Nullable Rule rule,
            @Nullable Limit limit,
            @Nullable String key,
            long hits,
            String metricRule,
            @Nullable Reservation reservation) {
        Item(
                Kind kind,
                @Nullable Rule rule,
                @Nullable Limit limit,
                @Nullable String key,
                long hits,
                String metricRule) {
            this(kind, rule, limit, key, hits, metricRule, null);
        }

        /** The rule: every kind of item but {@link Kind#NONE} has one. */
        Rule matched() {
            return Objects.requireNonNull(rule, "an item of kind NONE has no rule");
        }

        /** The limit the store is asked about: the items of a store call (enforced, shadow, check-only) have one. */
        Limit storeLimit() {
            return Objects.requireNonNull(limit, "only the items of a store call have a limit");
        }

        /** The store key, beside {@link #storeLimit()}. */
        String storeKey() {
            return Objects.requireNonNull(key, "only the items of a store call have a key");
        }

        /** The reservation of a {@link Kind#RESERVE} item. */
        Reservation reserved() {
            return Objects.requireNonNull(reservation, "only a RESERVE item has a reservation");
        }

        /** The cost a PEEK item asks about: its hits, or 1 for {@code hits: 0} (would the next request pass?). */
        long peekCost() {
            return Math.max(1, hits);
        }
    }
}
