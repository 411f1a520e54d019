package dev.sluice.server.config;

import dev.sluice.server.config.DomainRules.Entry;
import java.util.List;

/**
 * The rule a request descriptor matched ({@link DomainRules#match}), with what envoyproxy/ratelimit derives from the
 * way it matched.
 *
 * @param rule        the rule
 * @param keyEntries  the entries the store key is built from: the request's own, except that an entry matched
 *                    through a {@code share_threshold} wildcard carries the pattern's value part instead of the value
 *                    sent ({@code files/*} for {@code files/a.pdf}), so every value matching it shares one counter
 *                    (envoy's cache key); the request's list itself when no entry was replaced
 * @param metricLabel the rule label for metrics, as envoy names the rule's stats: by default the rule's
 *                    {@link Rule#id() config path}; the values sent with {@code detailed_metric}; the values sent at
 *                    levels matched by wildcard or key-only entries with {@code value_to_metric}; a
 *                    {@code share_threshold} entry always by its pattern
 */
public record Match(Rule rule, List<Entry> keyEntries, String metricLabel) {}
