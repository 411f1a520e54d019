package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The keys of envoyproxy/ratelimit's loader ({@code validKeys}) that Sluice reads besides the basic ones —
 * {@code quota_mode}, {@code value_to_metric}, {@code share_threshold}, {@code metadata}, {@code detailed_metric} —
 * Sluice's {@code semantics:}, and the problems, with their lines, for what envoy refuses and for their misuse.
 */
class RulesParserKeysTest {

    static DomainRules rules(String yaml) {
        return RulesParserMatchTest.rules(yaml);
    }

    static List<String> problems(String yaml) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> RuleSet.parse("rules.yaml", yaml));
        assertThat(e).as("refused: %s", yaml).isNotNull();
        return e.problems();
    }

    @Test
    void everyKeyOfEnvoysLoaderIsRead() {
        DomainRules d = rules("""
                domain: d
                semantics: strict
                descriptors:
                  - key: service
                    value: service_1
                    quota_mode: true
                    shadow_mode: true
                    detailed_metric: true
                    value_to_metric: true
                    rate_limit:
                      name: svc1
                      replaces:
                        - name: other
                      unit: minute
                      requests_per_unit: 1
                    metadata:
                      service_with_quota:
                        name: "service_1"
                  - key: path
                    value: /files/*
                    share_threshold: true
                    descriptors:
                      - key: user
                        rate_limit:
                          unlimited: true
                """);
        assertThat(d.semantics()).isEqualTo(Semantics.STRICT);
        Rule r = d.rules().get(0);
        assertThat(r.id()).isEqualTo("d.service_service_1");
        assertThat(r.quotaMode()).isTrue();
        assertThat(r.shadowMode()).isTrue();
        assertThat(r.detailedMetric()).isTrue();
        assertThat(r.name()).isEqualTo("svc1");
        assertThat(r.replaces()).containsExactly("other");
        assertThat(r.metadata()).isEqualTo(Map.of("service_with_quota", Map.of("name", "service_1")));
        DescriptorNode service = d.root().find("service", "service_1");
        assertThat(service.valueToMetric()).isTrue();
        assertThat(service.shareThreshold()).isFalse();
        DescriptorNode path = d.root().find("path", "/files/report.pdf");
        assertThat(path.shareThreshold()).isTrue();
        assertThat(path.isWildcard()).isTrue();
        assertThat(path.composite()).isEqualTo("path_/files/*");
        assertThat(d.rules().get(1).kind()).isEqualTo(Rule.Kind.UNLIMITED);
        assertThat(d.rules().get(1).quotaMode()).isFalse();
        assertThat(d.rules().get(1).metadata()).isNull();
    }

    @Test
    void flagsDefaultToFalseAndSemanticsToTheServiceDefault() {
        DomainRules d = rules("""
                domain: d
                descriptors:
                  - key: k
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata: {}
                """);
        assertThat(d.semantics()).isNull();
        Rule r = d.rules().get(0);
        assertThat(r.quotaMode()).isFalse();
        assertThat(r.shadowMode()).isFalse();
        assertThat(r.detailedMetric()).isFalse();
        assertThat(r.metadata())
                .as("an empty mapping is no metadata, as in envoy")
                .isNull();
        DescriptorNode k = d.root().find("k", "v");
        assertThat(k.valueToMetric()).isFalse();
        assertThat(k.shareThreshold()).isFalse();
        assertThat(k.isWildcard()).isFalse();
    }

    @Test
    void emptyValuesAreReadAsEnvoyReadsThem() {
        DomainRules d = rules("""
                domain: d
                descriptors:
                  - key: k
                    value:
                    shadow_mode:
                    quota_mode: ~
                    share_threshold:
                    metadata:
                    rate_limit:
                      name:
                      replaces:
                      unit: second
                      requests_per_unit: 1
                    descriptors:
                """);
        Rule r = d.rules().get(0);
        assertThat(r.id()).isEqualTo("d.k");
        assertThat(r.name()).isNull();
        assertThat(r.policyName()).isEqualTo("d.k");
        assertThat(r.replaces()).isEmpty();
        assertThat(r.shadowMode()).isFalse();
        assertThat(r.quotaMode()).isFalse();
        assertThat(r.metadata()).isNull();
        assertThat(d.root().find("k", "anything").children().isEmpty()).isTrue();
        assertThat(rules("domain: d\ndescriptors:\n").rules()).isEmpty();
    }

    @Test
    void metadataValuesFollowTheirYamlTags() {
        Map<String, Object> m = rules("""
                domain: d
                descriptors:
                  - key: k
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata:
                      text: service_1
                      quoted: "123"
                      tagged: !!str 456
                      int: 42
                      negative: -7
                      hex: 0x1F
                      underscores: 1_000
                      huge: 99999999999999999999
                      float: 2.5
                      exponent: 1e3
                      infinity: .inf
                      yes: true
                      off: off
                      none: null
                      tilde: ~
                      empty:
                      date: 2001-12-14
                      list: [1, two, 3.0, false, null]
                      nested: {a: {b: [x, {c: 1}]}}
                      <<: {merged: 1, text: not this}
                """).rules().get(0).metadata();
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("text", "service_1");
        expected.put("quoted", "123");
        expected.put("tagged", "456");
        expected.put("int", 42L);
        expected.put("negative", -7L);
        expected.put("hex", 31L);
        expected.put("underscores", 1000L);
        expected.put("huge", 1.0E20);
        expected.put("float", 2.5);
        expected.put("exponent", 1000.0);
        expected.put("infinity", Double.POSITIVE_INFINITY);
        expected.put("yes", true);
        expected.put("off", false);
        expected.put("none", null);
        expected.put("tilde", null);
        expected.put("empty", null);
        expected.put("date", "2001-12-14");
        expected.put("list", Arrays.asList(1L, "two", 3.0, false, null));
        expected.put("nested", Map.of("a", Map.of("b", List.of("x", Map.of("c", 1L)))));
        expected.put("merged", 1L);
        assertThat(m).containsExactlyInAnyOrderEntriesOf(expected);
        assertThat(m.get("yes")).isInstanceOf(Boolean.class);
        assertThat(m.get("int")).isInstanceOf(Long.class);
        assertThat(m.get("float")).isInstanceOf(Double.class);
        assertThatThrownBy(() -> m.put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> ((List<?>) m.get("list")).clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void anAliasedMetadataMappingMayBeSharedByTwoRules() {
        DomainRules d = rules("""
                domain: d
                descriptors:
                  - key: a
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata: &team {team: payments}
                  - key: b
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata: *team
                """);
        assertThat(d.rules().get(1).metadata())
                .isEqualTo(d.rules().get(0).metadata())
                .isEqualTo(Map.of("team", "payments"));
    }

    @Test
    void metadataProblemsHaveTheirLines() {
        assertThat(problems("""
                domain: d
                descriptors:
                  - key: a
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata: [x, y]
                  - key: b
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata:
                      blob: !!binary aGVsbG8=
                      ? [k]
                      : v
                      n: !!int twelve
                      dup: 1
                      dup: 2
                      maybe: !!bool perhaps
                  - key: c
                    rate_limit: {unit: second, requests_per_unit: 1}
                    metadata: &m
                      self: *m
                  - key: e
                    metadata: {x: 1}
                """))
                .containsExactly(
                        "rules.yaml:5: 'metadata' must be a mapping of 'name: value' lines, e.g. 'metadata: {team: payments, tier: 2}'",
                        "rules.yaml:9: 'metadata' value 'aGVsbG8=' has the tag 'tag:yaml.org,2002:binary', which metadata cannot "
                                + "hold: use a string, number, true/false, null, list or mapping",
                        "rules.yaml:10: keys in 'metadata' must be plain values (a Struct's keys are strings), not lists or mappings",
                        "rules.yaml:12: 'metadata' value 'twelve' is not a valid whole number: fix it, or quote it to keep it as a string",
                        "rules.yaml:14: duplicate key 'dup' in 'metadata'",
                        "rules.yaml:15: 'metadata' value 'perhaps' is not a valid true/false: fix it, or quote it to keep it as a string",
                        "rules.yaml:18: 'metadata' contains itself through an alias (*name): metadata is a tree; write the nested "
                                + "values out",
                        "rules.yaml:21: 'metadata' on a descriptor without 'rate_limit' has no effect (it is returned with the "
                                + "rule that matched): put it beside the rate_limit it describes");
    }

    @Test
    void semanticsIsReadBesideDomain() {
        assertThat(rules("domain: d\nsemantics: envoy\ndescriptors: []\n").semantics())
                .isEqualTo(Semantics.ENVOY);
        assertThat(rules("semantics: STRICT\ndomain: d\n").semantics()).isEqualTo(Semantics.STRICT);
        assertThat(rules("domain: d\n").semantics()).isNull();
    }

    @Test
    void aBadSemanticsIsAProblemWithItsLine() {
        assertThat(problems("domain: d\nsemantics: lenient\ndescriptors: []\n"))
                .containsExactly(
                        "rules.yaml:2: unknown semantics 'lenient': use envoy (count every hit, each descriptor on its own) or "
                                + "strict (denied calls consume nothing, descriptors all-or-nothing)");
        assertThat(problems("domain: d\nsemantics: [envoy]\n"))
                .containsExactly("rules.yaml:2: 'semantics' must be a single value, not a list or mapping");
        assertThat(problems("domain: d\ndescriptors:\n  - key: k\n    semantics: strict\n"))
                .containsExactly(
                        "rules.yaml:4: unknown key 'semantics' in a descriptor: it belongs at the top of a rules document, "
                                + "beside 'domain'; expected one of charge_on_stream_done, descriptors, detailed_metric, key, metadata, quota_mode, "
                                + "rate_limit, reservation, shadow_mode, share_threshold, value, value_to_metric");
    }

    @Test
    void shareThresholdNeedsAWildcard() {
        assertThat(problems("""
                domain: d
                descriptors:
                  - key: files
                    value: report.pdf
                    share_threshold: true
                    rate_limit: {unit: hour, requests_per_unit: 10}
                  - key: user
                    share_threshold: yes
                    rate_limit: {unit: hour, requests_per_unit: 10}
                """))
                .containsExactly(
                        "rules.yaml:5: share_threshold can only be used with wildcard values (containing '*'), but found key "
                                + "'files_report.pdf': write a pattern, e.g. 'value: files/*' (every value matching it then "
                                + "shares one counter), or remove 'share_threshold'",
                        "rules.yaml:8: share_threshold can only be used with wildcard values (containing '*'), but found key "
                                + "'user': write a pattern, e.g. 'value: files/*' (every value matching it then shares one "
                                + "counter), or remove 'share_threshold'");
        DomainRules ok = rules("""
                domain: d
                descriptors:
                  - key: tenant-*
                    share_threshold: true
                    rate_limit: {unit: hour, requests_per_unit: 10}
                  - key: files
                    value: files/*
                    share_threshold: false
                    rate_limit: {unit: hour, requests_per_unit: 10}
                """);
        assertThat(ok.root().find("tenant-a", "1").shareThreshold())
                .as("a '*' in the key counts, as in envoy")
                .isTrue();
        assertThat(ok.root().find("files", "files/a").shareThreshold()).isFalse();
    }

    @Test
    void whatEnvoysLoaderRefusesIsAProblemWithItsLine() {
        assertThat(problems("""
                domain: d
                descriptors:
                  - key: key1
                    value: value1
                    ratelimit:
                      unit: day
                      requests_per_unit: 5
                  - key: key2
                    rate_limit:
                      unit: day
                      requestsperunit: 5
                  - a
                  - key: key3
                    descriptors:
                      - key: sub
                        rate_limit:
                          name: self
                          replaces:
                            - name: self
                            - name:
                          unit: second
                          requests_per_unit: 5
                  - key: key4
                    rate_limit:
                      unlimited: true
                      unit: day
                  - key: ""
                  - key: key1
                    value: value1
                  - key: a
                    value: b_c
                  - key: a_b
                    value: c
                """))
                .containsExactly(
                        "rules.yaml:5: unknown key 'ratelimit' in a descriptor: expected one of charge_on_stream_done, descriptors, detailed_metric, key, "
                                + "metadata, quota_mode, rate_limit, reservation, shadow_mode, share_threshold, value, value_to_metric",
                        "rules.yaml:10: 'rate_limit' without 'requests_per_unit': say how many requests, e.g. "
                                + "'requests_per_unit: 100' (or 'unlimited: true')",
                        "rules.yaml:11: unknown key 'requestsperunit' in 'rate_limit': expected one of algorithm, burst, name, "
                                + "replaces, requests_per_unit, unit, unlimited, window",
                        "rules.yaml:12: a descriptor must be a mapping of 'key: value' lines",
                        "rules.yaml:19: replaces should not contain name of same descriptor: 'self' is this rate_limit's own "
                                + "name; name the rate_limit of another descriptor",
                        "rules.yaml:20: 'replaces' entry without a 'name': name the rate_limit it replaces",
                        "rules.yaml:26: 'unit' with 'unlimited: true': an unlimited rule has no limit; remove one",
                        "rules.yaml:27: descriptor without a 'key': every entry needs one, e.g. 'key: remote_address'",
                        "rules.yaml:28: duplicate descriptor key 'key1' value 'value1' in the same list: each key/value pair may "
                                + "appear once per level",
                        "rules.yaml:32: duplicate descriptor composite key 'a_b_c': key 'a_b' value 'c' and key 'a' value 'b_c' "
                                + "in the same list are one entry to envoy, which knows entries by key + '_' + value; rename one "
                                + "of the keys");
    }

    @Test
    void aKnownKeyInTheWrongPlaceSaysWhereItBelongs() {
        assertThat(problems("""
                domain: d
                descriptors:
                  - key: k
                    rate_limit:
                      unit: second
                      requests_per_unit: 5
                      shadow_mode: true
                    requests_per_unit: 5
                    domain: other
                """))
                .containsExactly(
                        "rules.yaml:7: unknown key 'shadow_mode' in 'rate_limit': it belongs on a descriptor (a '- key: …' "
                                + "entry) (envoyproxy/ratelimit would ignore it here); expected one of algorithm, burst, name, "
                                + "replaces, requests_per_unit, unit, unlimited, window",
                        "rules.yaml:8: unknown key 'requests_per_unit' in a descriptor: it belongs in 'rate_limit' "
                                + "(envoyproxy/ratelimit would ignore it here); expected one of charge_on_stream_done, descriptors, detailed_metric, key, "
                                + "metadata, quota_mode, rate_limit, reservation, shadow_mode, share_threshold, value, value_to_metric",
                        "rules.yaml:9: unknown key 'domain' in a descriptor: it belongs at the top of a rules document "
                                + "(envoyproxy/ratelimit would ignore it here); expected one of charge_on_stream_done, descriptors, detailed_metric, key, "
                                + "metadata, quota_mode, rate_limit, reservation, shadow_mode, share_threshold, value, value_to_metric");
    }

    @Test
    void flagsThatActOnARuleNeedOne() {
        assertThat(problems("""
                domain: d
                descriptors:
                  - key: k
                    quota_mode: true
                    shadow_mode: true
                    descriptors:
                      - key: j
                        quota_mode: sometimes
                        rate_limit: {unit: second, requests_per_unit: 1}
                """))
                .containsExactly(
                        "rules.yaml:4: 'quota_mode' on a descriptor without 'rate_limit' has no effect: put it beside the "
                                + "rate_limit it should soften",
                        "rules.yaml:5: 'shadow_mode' on a descriptor without 'rate_limit' has no effect: put it beside the "
                                + "rate_limit it should soften",
                        "rules.yaml:8: 'quota_mode' must be true or false, not 'sometimes'");
        // value_to_metric, share_threshold and detailed_metric act on matching and labels: fine without a rule
        DomainRules d = rules("""
                domain: d
                descriptors:
                  - key: k
                    value: v*
                    value_to_metric: true
                    share_threshold: true
                    detailed_metric: true
                    descriptors:
                      - key: j
                        rate_limit: {unit: second, requests_per_unit: 1}
                """);
        assertThat(d.rules()).hasSize(1);
    }
}
