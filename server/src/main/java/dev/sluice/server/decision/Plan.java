package dev.sluice.server.decision;

import dev.sluice.Limit;
import dev.sluice.server.config.Rule;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a request asks of the store, worked out before the store is asked: one {@link Item} per descriptor, with
 * its rule, limit, store key and what kind of store call (if any) it needs.
 */
record Plan(String metricDomain, List<Item> items) {

    /** What a descriptor needs: nothing (no rule, unlimited, blocked), or a store call of some kind. */
    enum Kind {
        NONE,
        UNLIMITED,
        BLOCKED,
        ENFORCED,
        SHADOW,
        PEEK,
        /** Strict semantics on the Envoy APIs: more hits than the limit's capacity, over without taking anything. */
        OVERSIZED
    }

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
            String metricRule) {
        /** The rule: every kind of item but {@link Kind#NONE} has one. */
        Rule matched() {
            return Objects.requireNonNull(rule, "an item of kind NONE has no rule");
        }

        /** The limit the store is asked about: the items of a store call (see {@link #needsStore()}) have one. */
        Limit storeLimit() {
            return Objects.requireNonNull(limit, "only the items of a store call have a limit");
        }

        /** The store key, beside {@link #storeLimit()}. */
        String storeKey() {
            return Objects.requireNonNull(key, "only the items of a store call have a key");
        }

        /** The cost a PEEK item asks about: its hits, or 1 for {@code hits: 0} (would the next request pass?). */
        long peekCost() {
            return Math.max(1, hits);
        }
    }

    /**
     * The most store calls deciding this plan makes: one per check-only or shadow descriptor, one for the
     * enforced ones, and with several enforced ones a peek each for their own numbers.
     */
    int storeCalls() {
        int enforced = 0;
        int others = 0;
        for (Item i : items) {
            if (i.kind == Kind.ENFORCED) {
                enforced++;
            } else if (i.kind == Kind.SHADOW || i.kind == Kind.PEEK || i.kind == Kind.OVERSIZED) {
                others++;
            }
        }
        return others + (enforced == 0 ? 0 : enforced == 1 ? 1 : 1 + enforced);
    }

    /**
     * The index of the plan's one store call when that is its only one and nothing else in the plan can deny (one
     * enforced descriptor beside descriptors with no rule or an unlimited one): the call may then be made before
     * the rest is looked at, asynchronously. -1 otherwise.
     */
    int loneEnforced() {
        int found = -1;
        for (int k = 0; k < items.size(); k++) {
            Kind kind = items.get(k).kind;
            if (kind == Kind.ENFORCED) {
                if (found >= 0) {
                    return -1;
                }
                found = k;
            } else if (kind != Kind.NONE && kind != Kind.UNLIMITED) {
                return -1;
            }
        }
        return found;
    }

    boolean needsStore() {
        for (Item i : items) {
            if (i.kind == Kind.ENFORCED || i.kind == Kind.SHADOW || i.kind == Kind.PEEK || i.kind == Kind.OVERSIZED) {
                return true;
            }
        }
        return false;
    }
}
