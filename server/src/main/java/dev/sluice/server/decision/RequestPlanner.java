package dev.sluice.server.decision;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateUnit;
import dev.sluice.Settlement;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.Match;
import dev.sluice.server.config.Rule;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.config.StreamDone;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.decision.Plan.Kind;
import dev.sluice.server.decision.Plan.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Everything about a request that can be decided or refused without the store: its shape (a domain, 1 to
 * {@code --max-descriptors} descriptors, entries, hits), each descriptor's rule (envoy's matching, a caller-sent
 * limit, {@code replaces}), its store key and the kind of store call it needs. Bad input ends here as a
 * {@link BadRequestException} naming the descriptor and the fix, before anything is taken.
 *
 * <p>Caller-sent limits are bounded ({@link #maxClientLimits(int)}): stores keep per-limit bookkeeping, so an
 * unbounded stream of made-up limits must not be able to exhaust it.
 */
final class RequestPlanner {
    private volatile RuleSet rules;
    private final int maxDescriptors;
    private final Set<Limit> clientLimits = ConcurrentHashMap.newKeySet();
    private volatile int maxClientLimits = 1024;

    RequestPlanner(RuleSet rules, int maxDescriptors) {
        this.rules = rules;
        this.maxDescriptors = maxDescriptors;
    }

    RuleSet rules() {
        return rules;
    }

    void rules(RuleSet next) {
        rules = next;
    }

    int maxDescriptors() {
        return maxDescriptors;
    }

    void maxClientLimits(int max) {
        this.maxClientLimits = max;
    }

    /** A fixed window's length to its envoy counter, see {@link #counting}. */
    private final ConcurrentHashMap<Duration, Limit> counters = new ConcurrentHashMap<>();

    /**
     * The limit envoy's counting is kept under. envoyproxy/ratelimit adds every hit to a counter keyed by the domain,
     * the entries and the window's start ({@code INCRBY}), and answers OVER_LIMIT when the count is beyond the limit:
     * denied hits count too, so after a denial the window stays over, and a check of 0 hits is OVER_LIMIT only
     * beyond the limit. Sluice keeps the same counter as a fixed window of {@link Limit#MAX_WINDOW_PERMITS} (which
     * never denies in practice) per window length: its remaining tells the count, the limit is compared here
     * ({@link EnvoyDecider}). Every hit answered OK was counted within the limit, so no more than the limit are
     * ever admitted in a window. As in envoy the counter belongs to the entries and the window, not to the numbers:
     * a caller-sent limit of the same unit counts on the same counter, and a changed {@code requests_per_unit}
     * keeps the count. Other algorithms (Sluice's additions) keep their own limit.
     */
    Limit counting(Limit limit) {
        if (limit.algorithm() != Algorithm.FIXED_WINDOW) {
            return limit;
        }
        return counters.computeIfAbsent(limit.window(), w -> Limit.fixedWindow(Limit.MAX_WINDOW_PERMITS, w));
    }

    Plan plan(CheckRequest request, Mode mode) {
        return plan(request, mode, false);
    }

    /**
     * @param envoyApi true for the Envoy APIs (gRPC, {@code POST /json}), which answer as envoyproxy/ratelimit does
     *                 where Sluice's own API refuses: an unknown domain limits nothing (every descriptor OK, no
     *                 limit), and hits above a limit's capacity are an OVER_LIMIT answer, not a bad request
     */
    Plan plan(CheckRequest request, Mode mode, boolean envoyApi) {
        boolean deciding = mode != Mode.RESET;
        String domain = request.domain();
        if (domain == null || domain.isEmpty()) {
            throw new BadRequestException("missing-domain", "'domain' is missing: name the rules domain, e.g. \"api\"");
        }
        List<CheckRequest.Descriptor> ds = request.descriptors();
        if (ds == null || ds.isEmpty()) {
            throw new BadRequestException(
                    "missing-descriptors",
                    "'descriptors' is empty: send at least one, e.g. [{\"entries\":[{\"key\":\"user\",\"value\":\"42\"}]}]");
        }
        if (ds.size() > maxDescriptors) {
            throw new BadRequestException(
                    "too-many-descriptors",
                    ds.size() + " descriptors in one request: at most " + maxDescriptors + " (--max-descriptors)");
        }
        RuleSet rs = rules;
        DomainRules dr = rs.domain(domain);
        boolean allOverridden = true;
        for (CheckRequest.Descriptor d : ds) {
            allOverridden &= d.overridden();
        }
        if (dr == null && !allOverridden && !envoyApi) {
            throw new BadRequestException(
                    "unknown-domain",
                    "unknown domain '" + domain + "': configured domains are "
                            + rs.domains().keySet().stream().sorted().toList());
        }
        Rule[] matched = new Rule[ds.size()];
        String[] ids = new String[ds.size()]; // reservation ids carried in a rule's id_key entry
        Match[] matches = new Match[ds.size()];
        Set<String> replaced = Set.of(); // a set of its own once a matched rule replaces another
        for (int i = 0; i < ds.size(); i++) {
            CheckRequest.Descriptor d = ds.get(i);
            if (d.entries() == null || d.entries().isEmpty()) {
                throw new BadRequestException(
                        "empty-descriptor",
                        "descriptors[" + i + "] has no entries: give at least one {\"key\":…,\"value\":…}");
            }
            if (d.hits() < 0) {
                throw new BadRequestException(
                        "invalid-hits",
                        "descriptors[" + i + "]: hits " + d.hits() + " is negative: use 0 (check only) or more");
            }
            if (mode == Mode.PEEK && d.hits() == 0) {
                throw new BadRequestException(
                        "invalid-hits",
                        "descriptors[" + i + "]: hits 0 asks about nothing: "
                                + "peek takes the cost to ask about as hits (1 or more; default 1)");
            }
            if (envoyApi && dr == null) {
                // envoy looks a domain up before a descriptor's own limit: an unknown domain limits nothing
                matched[i] = null;
            } else if (d.override() == null && d.overrideUnit() != null) {
                // envoy's limit of 0 requests per unit: every hit is over, as a configured 'requests_per_unit: 0'
                Duration w = RateUnit.fromConfigName(d.overrideUnit()).length();
                matched[i] = new Rule(
                        domain + ".override",
                        null,
                        List.of(),
                        Rule.Kind.BLOCKED,
                        null,
                        Algorithm.FIXED_WINDOW,
                        0,
                        d.overrideUnit(),
                        w,
                        0,
                        false,
                        false,
                        false,
                        null,
                        "request",
                        null);
            } else if (d.override() != null) {
                Limit l = d.override();
                if (maxClientLimits == 0) {
                    throw new BadRequestException(
                            "client-limits-disabled",
                            "descriptors[" + i
                                    + "] sends its own limit, which this service refuses (--max-client-limits 0): "
                                    + "use the configured rules");
                }
                if (!clientLimits.contains(l)) {
                    synchronized (clientLimits) {
                        if (clientLimits.size() >= maxClientLimits && !clientLimits.contains(l)) {
                            throw new BadRequestException(
                                    "too-many-client-limits",
                                    "descriptors[" + i
                                            + "] sends a new limit " + l + " but callers already use "
                                            + clientLimits.size()
                                            + " distinct limits, the most this service accepts (--max-client-limits): reuse limits");
                        }
                        clientLimits.add(l);
                    }
                }
                matched[i] = new Rule(
                        domain + ".override",
                        null,
                        List.of(),
                        Rule.Kind.LIMITED,
                        l,
                        l.algorithm(),
                        l.rate().permits(),
                        d.overrideUnit(),
                        l.rate().period(),
                        l.capacity(),
                        false,
                        false,
                        false,
                        null,
                        "request",
                        null);
            } else if (dr != null) {
                matches[i] = match(dr, d.entries(), ids, i);
                matched[i] = matches[i] == null ? null : matches[i].rule();
                if (matched[i] != null && !matched[i].replaces().isEmpty()) {
                    if (replaced.isEmpty()) {
                        replaced = new HashSet<>();
                    }
                    replaced.addAll(matched[i].replaces());
                }
            }
        }
        List<Item> items = new ArrayList<>(ds.size());
        for (int i = 0; i < ds.size(); i++) {
            CheckRequest.Descriptor d = ds.get(i);
            Rule r = matched[i];
            if (r != null && r.name() != null && replaced.contains(r.name())) {
                r = null; // envoy: a replaced rule is not evaluated and its counter is left alone
            }
            if (r == null) {
                items.add(new Item(Kind.NONE, null, null, null, d.hits(), "none"));
                continue;
            }
            String metricRule = matches[i] != null ? matches[i].metricLabel() : r.id();
            switch (r.kind()) {
                case UNLIMITED -> items.add(new Item(Kind.UNLIMITED, r, null, null, d.hits(), metricRule));
                case BLOCKED -> items.add(new Item(Kind.BLOCKED, r, null, null, d.hits(), metricRule));
                case LIMITED -> {
                    Limit ruleLimit = r.limitOfLimited();
                    String key = StoreKeys.storeKey(domain, matches[i] != null ? matches[i].keyEntries() : d.entries());
                    long hits = d.hits();
                    StreamDone sd = deciding && mode != Mode.PEEK ? r.streamDone() : null;
                    boolean streamed = sd != null && (ids[i] != null || (sd.charges() && hits > 0));
                    try {
                        if (hits > 0 && deciding) {
                            if ((envoyApi && hits > ruleLimit.capacity()) || streamed) {
                                Permit.checkKey(key); // never grantable: over the limit, decided without the store
                            } else {
                                Permit.check(key, ruleLimit, hits);
                            }
                        }
                    } catch (IllegalArgumentException e) {
                        throw new BadRequestException(
                                "invalid-hits", "descriptors[" + i + "] (rule " + r.id() + "): " + e.getMessage());
                    }
                    Kind kind = mode == Mode.ENVOY
                            ? (r.shadowMode() ? Kind.SHADOW : Kind.ENFORCED)
                            : hits == 0 || mode == Mode.PEEK
                                    ? Kind.PEEK
                                    : hits > ruleLimit.capacity()
                                            ? Kind.OVERSIZED
                                            : r.shadowMode() ? Kind.SHADOW : Kind.ENFORCED;
                    if (streamed && ids[i] != null) {
                        // a reservation is decided on the rule's own limit in both semantics: admitted on its estimate
                        items.add(
                                new Item(Kind.RESERVE, r, ruleLimit, key, hits, metricRule, reservation(i, r, ids[i])));
                        continue;
                    }
                    // a reservation rule's state is its own limit's, whatever asks: not envoy's counter
                    boolean reserves = r.streamDone() != null && !r.streamDone().charges();
                    Limit limit = mode == Mode.ENVOY && !reserves ? counting(ruleLimit) : ruleLimit;
                    items.add(new Item(streamed ? Kind.CHARGE : kind, r, limit, key, hits, metricRule));
                }
                default -> throw new IllegalStateException("unknown rule kind " + r.kind());
            }
        }
        // a domain without rules is named by the caller: keep it out of metric labels. "_client": every descriptor
        // sent its own limit; "_unknown": the rest (the Envoy APIs answer OK and limit nothing, as envoy does; on the
        // dashboard and in server/README.md's metrics, often the sign of a caller's misspelt domain)
        return new Plan(dr != null ? domain : allOverridden ? "_client" : "_unknown", items, envoyApi);
    }

    /**
     * The rule of a descriptor's entries. In a domain with {@code reservation:} rules, a descriptor whose last entry
     * has one of their {@code id_key}s is matched without it, and when that finds a rule with that very
     * {@code id_key} the entry's value is the descriptor's reservation id ({@code ids[i]}), no part of its store key;
     * otherwise the descriptor is matched as sent.
     */
    private static @Nullable Match match(DomainRules dr, List<Entry> entries, String[] ids, int i) {
        int n = entries.size();
        if (n > 1 && dr.reservationIdKeys().contains(entries.get(n - 1).key())) {
            Entry id = entries.get(n - 1);
            Match m = dr.match(entries.subList(0, n - 1));
            StreamDone sd = m == null ? null : m.rule().streamDone();
            if (sd != null && id.key().equals(sd.idKey())) {
                ids[i] = id.value();
                return m;
            }
        }
        return dr.match(entries);
    }

    private static Plan.Reservation reservation(int i, Rule r, String id) {
        try {
            Settlement.checkId("reservation", id);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(
                    "invalid-reservation", "descriptors[" + i + "] (rule " + r.id() + "): " + e.getMessage());
        }
        return new Plan.Reservation(id, Objects.requireNonNull(r.streamDone()).settleWithin());
    }
}
