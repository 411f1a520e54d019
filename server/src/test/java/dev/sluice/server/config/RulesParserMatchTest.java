package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.config.DomainRules.Entry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link DomainRules#match}: which rule, which store key entries and which metric label, as envoyproxy/ratelimit's
 * {@code GetLimit} gives them. The expectations are ported from envoy's {@code test/config/config_test.go} (named
 * after its test functions; files from {@code envoy-upstream/test/config}, inline configurations rewritten from its
 * Go structs as YAML), and the match order and envoy's composite-key behaviour are pinned beside them.
 */
class RulesParserMatchTest {

    // ---- helpers

    static DomainRules rules(String yaml) {
        try {
            return RuleSet.parse("test", yaml).domains().values().iterator().next();
        } catch (ConfigException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    static DomainRules upstream(String file) {
        String path = "/envoy-upstream/test/config/" + file;
        try (InputStream in = RulesParserMatchTest.class.getResourceAsStream(path)) {
            return rules(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Entries from {@code "k=v"} strings (split at the first '='). */
    static List<Entry> entries(String... kvs) {
        List<Entry> out = new ArrayList<>();
        for (String kv : kvs) {
            int eq = kv.indexOf('=');
            out.add(new Entry(kv.substring(0, eq), kv.substring(eq + 1)));
        }
        return out;
    }

    static Match match(DomainRules d, String... kvs) {
        return d.match(entries(kvs));
    }

    static String label(DomainRules d, String... kvs) {
        Match m = match(d, kvs);
        assertThat(m).as("a rule for %s", List.of(kvs)).isNotNull();
        return m.metricLabel();
    }

    static long limit(DomainRules d, String... kvs) {
        Match m = match(d, kvs);
        assertThat(m).as("a rule for %s", List.of(kvs)).isNotNull();
        return m.rule().requestsPerUnit();
    }

    // ---- Sluice's own: the order, where '*' may be, envoy's composite keys

    @Nested
    class MatchOrder {
        static final String RULES = """
                domain: d
                descriptors:
                  - key: path
                    rate_limit: {unit: second, requests_per_unit: 1}
                  - key: path
                    value: /api/*
                    rate_limit: {unit: second, requests_per_unit: 2}
                  - key: path
                    value: /api/*/admin
                    rate_limit: {unit: second, requests_per_unit: 3}
                  - key: path
                    value: /api/login
                    rate_limit: {unit: second, requests_per_unit: 4}
                """;

        @Test
        void exactThenTheFirstWildcardInFileOrderThenTheKeyOnlyEntry() {
            DomainRules d = rules(RULES);
            assertThat(limit(d, "path=/api/login"))
                    .as("exact beats the wildcards before it")
                    .isEqualTo(4);
            assertThat(limit(d, "path=/api/x/admin"))
                    .as("the first wildcard that matches, not the longest")
                    .isEqualTo(2);
            assertThat(limit(d, "path=/other")).as("the key-only entry last").isEqualTo(1);
            assertThat(limit(d, "path=/api/*"))
                    .as("a value equal to a pattern is an exact match")
                    .isEqualTo(2);
        }

        @Test
        void reorderingTheWildcardsChangesWhichOneWins() {
            DomainRules d = rules("""
                    domain: d
                    descriptors:
                      - key: path
                        value: /api/*/admin
                        rate_limit: {unit: second, requests_per_unit: 3}
                      - key: path
                        value: /api/*
                        rate_limit: {unit: second, requests_per_unit: 2}
                    """);
            assertThat(limit(d, "path=/api/x/admin")).isEqualTo(3);
            assertThat(limit(d, "path=/api/x")).isEqualTo(2);
        }

        @Test
        void wildcardsInTheMiddleSeveralAndZeroLength() {
            DomainRules d = rules("""
                    domain: d
                    descriptors:
                      - key: path
                        value: /api/*/resource/*/action
                        rate_limit: {unit: second, requests_per_unit: 1}
                      - key: host
                        value: '*.example.com'
                        rate_limit: {unit: second, requests_per_unit: 2}
                      - key: id
                        value: a**b
                        rate_limit: {unit: second, requests_per_unit: 3}
                    """);
            assertThat(match(d, "path=/api/v1/resource/123/action")).isNotNull();
            assertThat(match(d, "path=/api//resource//action"))
                    .as("each * matches zero characters too")
                    .isNotNull();
            assertThat(match(d, "path=/api/v1/resource/123/other")).isNull();
            assertThat(match(d, "path=/api/v1/action"))
                    .as("a middle part is missing")
                    .isNull();
            assertThat(match(d, "host=www.example.com")).isNotNull();
            assertThat(match(d, "host=example.com")).isNull();
            assertThat(match(d, "id=ab")).isNotNull();
            assertThat(match(d, "id=a")).as("prefix and suffix may not overlap").isNull();
        }

        @Test
        void aStarInAKeyOnlyEntryMatchesTheRequestsKeyUnderscoreValue() {
            DomainRules d = rules("""
                    domain: d
                    descriptors:
                      - key: user*
                        rate_limit: {unit: second, requests_per_unit: 1}
                      - key: x-*-id
                        rate_limit: {unit: second, requests_per_unit: 2}
                    """);
            assertThat(match(d, "user_id=7")).as("'user_id_7' matches user*").isNotNull();
            assertThat(match(d, "user=alice")).as("'user_alice' matches user*").isNotNull();
            assertThat(match(d, "account=1")).isNull();
            // envoy matches the pattern against key_value: a key-only pattern must match the value's end too
            assertThat(match(d, "x-tenant-id=5")).isNull();
            assertThat(match(d, "x-tenant=a-id"))
                    .as("'x-tenant_a-id' matches x-*-id")
                    .isNotNull();
            assertThat(match(d, "x-*-id=5"))
                    .as("no pattern matches 'x-*-id_5': the key-only lookup finds the entry " + "by its composite")
                    .isNotNull();
        }

        @Test
        void entriesAreKnownByTheirCompositeAsInEnvoy() {
            DomainRules d = rules("""
                    domain: d
                    descriptors:
                      - key: a
                        value: b_c
                        rate_limit: {unit: second, requests_per_unit: 1}
                      - key: x
                        value: y*
                        rate_limit: {unit: second, requests_per_unit: 2}
                      - key: m_n
                        rate_limit: {unit: second, requests_per_unit: 3}
                    """);
            assertThat(limit(d, "a=b_c")).isEqualTo(1);
            assertThat(limit(d, "a_b=c")).as("'a_b_c' either way").isEqualTo(1);
            assertThat(limit(d, "x_y=z")).as("'x_y_z' matches x_y*").isEqualTo(2);
            assertThat(limit(d, "m=n"))
                    .as("'m_n' is the key-only entry's composite")
                    .isEqualTo(3);
            assertThat(limit(d, "m_n=anything")).isEqualTo(3);
        }

        @Test
        void aRuleAppliesOnlyAtTheDepthOfTheLastEntryAndWildcardsWorkAtEveryLevel() {
            DomainRules d = rules("""
                    domain: d
                    descriptors:
                      - key: tenant
                        value: t-*
                        rate_limit: {unit: second, requests_per_unit: 1}
                        descriptors:
                          - key: path
                            value: /v*/x
                            rate_limit: {unit: second, requests_per_unit: 2}
                    """);
            assertThat(limit(d, "tenant=t-1")).isEqualTo(1);
            assertThat(limit(d, "tenant=t-1", "path=/v2/x")).isEqualTo(2);
            assertThat(match(d, "tenant=t-1", "path=/v2/y")).isNull();
            assertThat(match(d, "tenant=t-1", "path=/v2/x", "more=1")).isNull();
            assertThat(match(d)).isNull();
        }

        @Test
        void aLevelOfThousandsOfEntriesFindsEachOne() {
            StringBuilder yaml = new StringBuilder("domain: d\ndescriptors:\n");
            for (int i = 0; i < 3000; i++) {
                yaml.append("  - key: user\n    value: u_")
                        .append(i)
                        .append("\n    rate_limit: {unit: second, ")
                        .append("requests_per_unit: ")
                        .append(i + 1)
                        .append("}\n");
            }
            DomainRules d = rules(yaml.toString());
            for (int i = 0; i < 3000; i++) {
                assertThat(limit(d, "user=u_" + i)).isEqualTo(i + 1);
                assertThat(limit(d, "user_u=" + i)).as("the same composite").isEqualTo(i + 1);
            }
            assertThat(match(d, "user=u_3000")).isNull();
            assertThat(match(d, "user=")).isNull();
        }

        @Test
        void aPlainMatchReusesTheRequestsEntriesAndTheRulesId() {
            DomainRules d = rules(RULES);
            List<Entry> sent = entries("path=/api/login");
            Match m = d.match(sent);
            assertThat(m.keyEntries()).isSameAs(sent);
            assertThat(m.metricLabel()).isSameAs(m.rule().id()).isEqualTo("d.path_/api/login");
            assertThat(match(d, "path=/api/anything").metricLabel())
                    .isSameAs(match(d, "path=/api/x").rule().id())
                    .isEqualTo("d.path_/api/*");
        }
    }

    @Nested
    class ShareThresholdKeys {
        static final String RULES = """
                domain: d
                descriptors:
                  - key: files
                    value: files/*
                    share_threshold: true
                    rate_limit: {unit: hour, requests_per_unit: 10}
                  - key: files_no_share
                    value: files_no_share/*
                    rate_limit: {unit: hour, requests_per_unit: 10}
                  - key: tenant
                    value: t*prod
                    share_threshold: true
                    descriptors:
                      - key: user
                        rate_limit: {unit: hour, requests_per_unit: 10}
                """;

        @Test
        void valuesMatchingASharedPatternGetTheSameKeyEntries() {
            DomainRules d = rules(RULES);
            Match a = match(d, "files=files/a.pdf");
            Match b = match(d, "files=files/b.csv");
            assertThat(a.keyEntries())
                    .containsExactly(new Entry("files", "files/*"))
                    .isEqualTo(b.keyEntries());
            assertThat(a.metricLabel()).isEqualTo(b.metricLabel()).isEqualTo("d.files_files/*");
        }

        @Test
        void withoutShareThresholdEachValueKeepsItsOwnKeyEntries() {
            DomainRules d = rules(RULES);
            Match a = match(d, "files_no_share=files_no_share/a.pdf");
            Match b = match(d, "files_no_share=files_no_share/b.csv");
            assertThat(a.keyEntries()).containsExactly(new Entry("files_no_share", "files_no_share/a.pdf"));
            assertThat(b.keyEntries()).containsExactly(new Entry("files_no_share", "files_no_share/b.csv"));
            assertThat(a.metricLabel()).isEqualTo(b.metricLabel()).isEqualTo("d.files_no_share_files_no_share/*");
        }

        @Test
        void aSharedPatternAboveTheRuleStillSharesOnlyThatEntry() {
            DomainRules d = rules(RULES);
            assertThat(match(d, "tenant=t1prod", "user=alice").keyEntries())
                    .containsExactly(new Entry("tenant", "t*prod"), new Entry("user", "alice"));
            assertThat(match(d, "tenant=t99prod", "user=bob").keyEntries())
                    .containsExactly(new Entry("tenant", "t*prod"), new Entry("user", "bob"));
            assertThat(label(d, "tenant=t1prod", "user=alice")).isEqualTo("d.tenant_t*prod.user");
        }
    }

    // ---- the examples of server/README.md, read from it

    /** The ```yaml block of server/README.md that starts with {@code firstLine}. */
    static String readmeBlock(String firstLine) throws IOException {
        String readme = java.nio.file.Files.readString(java.nio.file.Path.of("README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("```yaml\n" + firstLine + "\n");
        assertThat(start)
                .as("a yaml block starting '%s' in server/README.md", firstLine)
                .isNotNegative();
        start += "```yaml\n".length();
        return readme.substring(start, readme.indexOf("```", start));
    }

    @Test
    void theReadmeExampleOfTheDescriptorFlags() throws IOException {
        DomainRules d = rules(readmeBlock("domain: files"));
        assertThat(match(d, "path=/downloads/a.zip").keyEntries())
                .isEqualTo(match(d, "path=/downloads/b/c.iso").keyEntries())
                .containsExactly(new Entry("path", "/downloads/*"));
        assertThat(label(d, "path=/downloads/a.zip")).isEqualTo("files.path_/downloads/*");
        Match export = match(d, "path=/api/v1/export");
        assertThat(export.keyEntries()).containsExactly(new Entry("path", "/api/v1/export"));
        assertThat(export.metricLabel()).isEqualTo("files.path_/api/v1/export");
        assertThat(export.rule().id()).isEqualTo("files.path_/api/*/export");
        Match t1 = match(d, "tenant=t-1", "user=7");
        assertThat(t1.keyEntries())
                .isEqualTo(match(d, "tenant=t-2", "user=7").keyEntries())
                .containsExactly(new Entry("tenant", "t-*"), new Entry("user", "7"));
        assertThat(t1.keyEntries())
                .isNotEqualTo(match(d, "tenant=t-1", "user=8").keyEntries());
        assertThat(t1.rule().quotaMode()).isTrue();
        assertThat(t1.rule().metadata()).isEqualTo(Map.of("team", "storage", "tier", 2L));
        assertThat(rules(readmeBlock("domain: payments")).semantics()).isEqualTo(Semantics.STRICT);
        DomainRules keyPattern = rules(
                "domain: d\ndescriptors:\n  - key: x-*\n    rate_limit: {unit: second, " + "requests_per_unit: 1}\n");
        assertThat(match(keyPattern, "x-tenant=7"))
                .as("the README's key-only pattern")
                .isNotNull();
    }

    // ---- ported from envoy's test/config/config_test.go

    @Test
    void testBasicConfig() {
        DomainRules d = upstream("basic_config.yaml");
        assertThat(match(d)).isNull();
        assertThat(match(d, "key1=something")).isNull();
        assertThat(match(d, "key1=value1")).isNull();
        assertThat(match(d, "key2=value2", "subkey=subvalue")).isNull();
        assertThat(match(d, "key5=value5", "subkey5=subvalue")).isNull();

        Match m = match(d, "key1=value1", "subkey1=something");
        assertThat(m.rule().requestsPerUnit()).isEqualTo(5);
        assertThat(m.rule().unit()).isEqualTo("second");
        assertThat(m.metricLabel()).isEqualTo("test-domain.key1_value1.subkey1");
        assertThat(label(d, "key1=value1", "subkey1=subvalue1")).isEqualTo("test-domain.key1_value1.subkey1_subvalue1");
        assertThat(limit(d, "key1=value1", "subkey1=subvalue1")).isEqualTo(10);
        assertThat(label(d, "key2=something")).isEqualTo("test-domain.key2");
        assertThat(match(d, "key2=something").rule().unit()).isEqualTo("minute");
        assertThat(limit(d, "key2=something")).isEqualTo(20);
        assertThat(label(d, "key2=value2")).isEqualTo("test-domain.key2_value2");
        assertThat(limit(d, "key2=value2")).isEqualTo(30);
        assertThat(match(d, "key2=value3"))
                .as("a value without rate_limit whitelists it")
                .isNull();
        assertThat(label(d, "key3=foo")).isEqualTo("test-domain.key3");
        assertThat(match(d, "key3=foo").rule().name()).isNull();
        assertThat(match(d, "key3=foo").rule().unit()).isEqualTo("hour");
        assertThat(match(d, "key4=foo").rule().name()).isEqualTo("key4_rate_limit");
        assertThat(match(d, "key4=foo").rule().unit()).isEqualTo("day");
        assertThat(match(d, "key6=foo").rule().kind()).isEqualTo(Rule.Kind.UNLIMITED);
        assertThat(label(d, "key6=foo")).isEqualTo("test-domain.key6");
        assertThat(limit(d, "key7=unspecified_value")).isEqualTo(70);
        assertThat(label(d, "key7=unspecified_value")).isEqualTo("test-domain.key7_unspecified_value");
        assertThat(label(d, "key7=another_value")).isEqualTo("test-domain.key7_another_value");
    }

    @Test
    void testShadowModeConfig() {
        DomainRules d = upstream("shadowmode_config.yaml");
        assertThat(match(d, "key1=value1", "subkey1=something").rule().shadowMode())
                .isFalse();
        assertThat(match(d, "key1=value1", "subkey1=subvalue1").rule().shadowMode())
                .isTrue();
        assertThat(match(d, "key2=something").rule().shadowMode()).isTrue();
        assertThat(match(d, "key2=value2").rule().shadowMode()).isFalse();
    }

    @Test
    void testWildcardConfig() {
        DomainRules d = upstream("wildcard.yaml");
        assertThat(label(d, "noVal=foo1")).isEqualTo(label(d, "noVal=foo2")).isEqualTo("test-domain.noVal");
        assertThat(match(d, "wild=foo1").rule()).isSameAs(match(d, "wild=foo2").rule());
        assertThat(label(d, "wild=foo1")).isEqualTo(label(d, "wild=foo2")).isEqualTo("test-domain.wild_foo*");
        assertThat(label(d, "nestedWild=val1", "wild=goo2")).isEqualTo("test-domain.nestedWild_val1.wild_goo*");
        assertThat(match(d, "wild=bar")).isNull();
        assertThat(match(d, "noWild=foo1"))
                .as("no eager match of a value without *")
                .isNull();
        assertThat(label(d, "midWild=barab"))
                .isEqualTo(label(d, "midWild=bar123b"))
                .isEqualTo("test-domain.midWild_bar*b");
        assertThat(match(d, "midWild=barb")).as("* matches the empty string").isNotNull();
        assertThat(match(d, "midWild=bara")).isNull();
        assertThat(match(d, "midWild=xbarb")).isNull();
        assertThat(label(d, "multiWild=foo123bar456baz"))
                .isEqualTo(label(d, "multiWild=foobarbaz"))
                .isEqualTo("test-domain.multiWild_foo*bar*baz");
        assertThat(match(d, "multiWild=foo123baz")).isNull();
        assertThat(match(d, "multiWild=bar456baz")).isNull();
        // envoy shares the rule, not the counter: without share_threshold each value has its own
        assertThat(match(d, "wild=foo1").keyEntries()).containsExactly(new Entry("wild", "foo1"));
    }

    @Nested
    class TestDetailedMetric {
        static final String NESTED = """
                domain: nested
                descriptors:
                  - key: key-1
                    DETAILED1
                    rate_limit: {unit: minute, requests_per_unit: 100}
                    descriptors:
                      - key: key-2
                        DETAILED2
                        rate_limit: {unit: minute, requests_per_unit: 5}
                """;
        static final String REALISTIC = """
                domain: nested
                descriptors:
                  - key: key_1
                    rate_limit: {requests_per_unit: 500, unit: minute}
                    detailed_metric: true
                  - key: key_1
                    value: some-value-for-key-1
                    rate_limit: {requests_per_unit: 500, unit: minute}
                  - key: key_2
                    rate_limit: {requests_per_unit: 5000, unit: minute}
                    descriptors:
                      - key: key_3
                        detailed_metric: true
                      - key: key_3
                        value: requested-key3-value
                        rate_limit: {requests_per_unit: 5, unit: minute}
                        detailed_metric: true
                    detailed_metric: true
                  - key: key_2
                    value: specific-id
                    rate_limit: {requests_per_unit: 50000, unit: minute}
                    descriptors:
                      - key: key_3
                        detailed_metric: true
                      - key: key_3
                        value: requested-key3-value
                        rate_limit: {requests_per_unit: 100, unit: minute}
                        detailed_metric: true
                    detailed_metric: true
                """;

        static DomainRules nested(boolean first, boolean second) {
            return rules(NESTED.replace("DETAILED1", "detailed_metric: " + first)
                    .replace("DETAILED2", "detailed_metric: " + second));
        }

        @Test
        void nestedWithNoValuesButRequestOnlyTopLevelKey() {
            assertThat(label(nested(true, false), "key-1=value-1")).isEqualTo("nested.key-1_value-1");
            assertThat(label(nested(false, false), "key-1=value-1")).isEqualTo("nested.key-1");
        }

        @Test
        void nestedWithNoValuesAndRequestFullyNestedDescriptors() {
            assertThat(label(nested(true, true), "key-1=value-1", "key-2=value-2"))
                    .isEqualTo("nested.key-1_value-1.key-2_value-2");
            assertThat(label(nested(false, false), "key-1=value-1", "key-2=value-2"))
                    .isEqualTo("nested.key-1.key-2");
        }

        @Test
        void realisticNestedDescriptors() {
            DomainRules d = rules(REALISTIC);
            assertThat(label(d, "key_1=value-for-key-1")).isEqualTo("nested.key_1_value-for-key-1");
            assertThat(label(d, "key_2=key-2-value")).isEqualTo("nested.key_2_key-2-value");
            assertThat(label(d, "key_2=key-2-value", "key_3=requested-key3-value"))
                    .isEqualTo("nested.key_2_key-2-value.key_3_requested-key3-value");
        }

        @Test
        void anEmptyValueIsWrittenKeyUnderscoreAsEnvoyDoes() {
            assertThat(label(nested(true, false), "key-1=")).isEqualTo("nested.key-1_");
        }
    }

    @Nested
    class TestValueToMetric {
        static final String THREE_LEVELS = """
                domain: domain
                descriptors:
                  - key: route
                    value_to_metric: true
                    descriptors:
                      - key: http_method
                        value_to_metric: true
                        descriptors:
                          - key: subject_id
                            LEAF
                            rate_limit: {requests_per_unit: 60, unit: minute}
                """;

        @Test
        void usesRuntimeValuesInStats() {
            DomainRules d = rules(THREE_LEVELS.replace("LEAF", ""));
            assertThat(label(d, "route=draw", "http_method=GET", "subject_id=123"))
                    .isEqualTo("domain.route_draw.http_method_GET.subject_id");
        }

        @Test
        void defaultKeyIncludesValueAtThatLevel() {
            DomainRules d = rules("""
                    domain: d
                    descriptors:
                      - key: k1
                        value_to_metric: true
                        descriptors:
                          - key: k2
                            rate_limit: {requests_per_unit: 1, unit: second}
                    """);
            assertThat(label(d, "k1=A", "k2=foo")).isEqualTo("d.k1_A.k2");
        }

        @Test
        void midLevelOnlyAndNoFlag() {
            String yaml = """
                    domain: d
                    descriptors:
                      - key: k1
                        descriptors:
                          - key: k2
                            FLAG
                            descriptors:
                              - key: k3
                                rate_limit: {requests_per_unit: 1, unit: second}
                    """;
            assertThat(label(rules(yaml.replace("FLAG", "value_to_metric: true")), "k1=X", "k2=Y", "k3=Z"))
                    .isEqualTo("d.k1.k2_Y.k3");
            assertThat(label(rules(yaml.replace("FLAG", "")), "k1=X", "k2=Y", "k3=Z"))
                    .isEqualTo("d.k1.k2.k3");
        }

        @Test
        void doesNotOverrideDetailedMetric() {
            DomainRules d = rules(THREE_LEVELS.replace("LEAF", "detailed_metric: true"));
            assertThat(label(d, "route=draw", "http_method=GET", "subject_id=123"))
                    .isEqualTo("domain.route_draw.http_method_GET.subject_id_123");
        }

        @Test
        void withConfiguredValues() {
            DomainRules d = rules("""
                    domain: test-domain
                    descriptors:
                      - key: route
                        value_to_metric: true
                        descriptors:
                          - key: http_method
                            value: GET
                            value_to_metric: true
                            descriptors:
                              - key: subject_id
                                rate_limit: {requests_per_unit: 60, unit: minute}
                          - key: http_method
                            value: POST
                            value_to_metric: true
                            descriptors:
                              - key: subject_id
                                rate_limit: {requests_per_unit: 30, unit: minute}
                    """);
            assertThat(limit(d, "route=api", "http_method=GET", "subject_id=user123"))
                    .isEqualTo(60);
            assertThat(label(d, "route=api", "http_method=GET", "subject_id=user123"))
                    .isEqualTo("test-domain.route_api.http_method_GET.subject_id");
            assertThat(limit(d, "route=api", "http_method=POST", "subject_id=user456"))
                    .isEqualTo(30);
            assertThat(label(d, "route=api", "http_method=POST", "subject_id=user456"))
                    .isEqualTo("test-domain.route_api.http_method_POST.subject_id");
        }

        @Test
        void withWildcard() {
            DomainRules d = rules("""
                    domain: domain
                    descriptors:
                      - key: user
                        value_to_metric: true
                        descriptors:
                          - key: action
                            value: read*
                            value_to_metric: true
                            descriptors:
                              - key: resource
                                rate_limit: {requests_per_unit: 100, unit: minute}
                    """);
            assertThat(label(d, "user=alice", "action=readfile", "resource=documents"))
                    .isEqualTo("domain.user_alice.action_readfile.resource");
            assertThat(label(d, "user=bob", "action=readdata", "resource=database"))
                    .isEqualTo("domain.user_bob.action_readdata.resource");
        }

        @Test
        void withEmptyValue() {
            DomainRules d = rules(THREE_LEVELS.replace("LEAF", ""));
            assertThat(label(d, "route=", "http_method=GET", "subject_id=123"))
                    .isEqualTo("domain.route.http_method_GET.subject_id");
            assertThat(label(d, "route=draw", "http_method=", "subject_id=123"))
                    .isEqualTo("domain.route_draw.http_method.subject_id");
            assertThat(label(d, "route=", "http_method=", "subject_id=123"))
                    .isEqualTo("domain.route.http_method.subject_id");
        }
    }

    @Nested
    class TestShareThreshold {
        final DomainRules d = upstream("share_threshold.yaml");

        @Test
        void basic() {
            for (String v : List.of("files/a.pdf", "files/b.csv", "files/c.txt")) {
                Match m = match(d, "files=" + v);
                assertThat(m.keyEntries()).containsExactly(new Entry("files", "files/*"));
                assertThat(m.rule().requestsPerUnit()).isEqualTo(100);
                assertThat(m.metricLabel()).isEqualTo("test-domain.files_files/*");
            }
        }

        @Test
        void withValueToMetricAndDetailedMetricTheSharedEntryKeepsItsPattern() {
            Match m1 = match(d, "route=api/v1", "method=GET");
            assertThat(m1.keyEntries()).containsExactly(new Entry("route", "api/*"), new Entry("method", "GET"));
            assertThat(m1.metricLabel()).isEqualTo("test-domain.route_api/*.method");
            Match m2 = match(d, "service=svc/user", "endpoint=get");
            assertThat(m2.keyEntries()).containsExactly(new Entry("service", "svc/*"), new Entry("endpoint", "get"));
            assertThat(m2.rule().detailedMetric()).isTrue();
            assertThat(m2.metricLabel()).isEqualTo("test-domain.service_svc/*.endpoint_get");
        }

        @Test
        void nestedWildcards() {
            Match m1 = match(d, "nested=parent", "files=nested/file1.txt");
            assertThat(m1.keyEntries()).containsExactly(new Entry("nested", "parent"), new Entry("files", "nested/*"));
            assertThat(m1.rule().requestsPerUnit()).isEqualTo(200);
            assertThat(m1.metricLabel()).isEqualTo("test-domain.nested_parent.files_nested/*");

            Match m2 = match(d, "files=top/file1.txt", "files=nested/file1.txt");
            assertThat(m2.keyEntries()).containsExactly(new Entry("files", "top/*"), new Entry("files", "nested/*"));
            assertThat(m2.metricLabel()).isEqualTo("test-domain.files_top/*.files_nested/*");

            Match m3 = match(d, "path=path/foo", "file=file/doc1", "type=pdf");
            assertThat(m3.keyEntries())
                    .containsExactly(
                            new Entry("path", "path/*"), new Entry("file", "file/doc1"), new Entry("type", "pdf"));
            assertThat(m3.metricLabel()).isEqualTo("test-domain.path_path/*.file_file/*.type");

            Match m4 = match(d, "user=user/alice", "resource=res/file1", "action=read");
            assertThat(m4.keyEntries())
                    .containsExactly(
                            new Entry("user", "user/*"), new Entry("resource", "res/*"), new Entry("action", "read"));
            assertThat(m4.metricLabel()).isEqualTo("test-domain.user_user/*.resource_res/*.action");
        }

        @Test
        void explicitValuePrecedenceOverWildcard() {
            Match test1 = match(d, "file=test1");
            assertThat(test1.rule().requestsPerUnit()).isEqualTo(50);
            assertThat(test1.keyEntries()).containsExactly(new Entry("file", "test1"));
            assertThat(test1.metricLabel()).isEqualTo("test-domain.file_test1");
            for (String v : List.of("test2", "test23", "test123")) {
                Match m = match(d, "file=" + v);
                assertThat(m.rule().requestsPerUnit()).isEqualTo(100);
                assertThat(m.keyEntries()).containsExactly(new Entry("file", "test*"));
                assertThat(m.metricLabel()).isEqualTo("test-domain.file_test*");
            }
        }

        @Test
        void middleAndMultipleWildcards() {
            for (String v : List.of("/api/v1", "/api-beta-v1", "/apiXYZv1")) {
                Match m = match(d, "midpath=" + v);
                assertThat(m.keyEntries()).containsExactly(new Entry("midpath", "/api*v1"));
                assertThat(m.metricLabel()).isEqualTo("test-domain.midpath_/api*v1");
            }
            assertThat(match(d, "midpath=/api/v2")).isNull();
            for (String v : List.of("svcAepBrpc", "svcXXXepYYYrpc", "svceprpc")) {
                Match m = match(d, "multiroute=" + v);
                assertThat(m.rule().requestsPerUnit()).isEqualTo(50);
                assertThat(m.keyEntries()).containsExactly(new Entry("multiroute", "svc*ep*rpc"));
                assertThat(m.metricLabel()).isEqualTo("test-domain.multiroute_svc*ep*rpc");
            }
            assertThat(match(d, "multiroute=svcABCrpc")).isNull();
            assertThat(label(d, "midroute=/api/v2"))
                    .isEqualTo(label(d, "midroute=/api-beta-v2"))
                    .isEqualTo("test-domain.midroute_/api*v2");
            Match nested = match(d, "tenant=t1prod", "resource=resAv2");
            assertThat(nested.keyEntries())
                    .containsExactly(new Entry("tenant", "t*prod"), new Entry("resource", "res*v2"));
            assertThat(nested.metricLabel()).isEqualTo("test-domain.tenant_t*prod.resource_res*v2");
            assertThat(match(d, "tenant=t99prod", "resource=resBBBv2").keyEntries())
                    .isEqualTo(nested.keyEntries());
        }
    }

    @Nested
    class TestWildcardStatsBehavior {
        static DomainRules wild(String value, String flags) {
            return rules("domain: test-domain\ndescriptors:\n  - key: wild\n    value: '" + value + "'\n" + flags
                    + "    rate_limit: {requests_per_unit: 20, unit: minute}\n");
        }

        @Test
        void noFlagsPreservesThePattern() {
            assertThat(label(wild("foo*", ""), "wild=foo1")).isEqualTo("test-domain.wild_foo*");
            assertThat(label(wild("foo*bar*", ""), "wild=foo123bar456"))
                    .isEqualTo(label(wild("foo*bar*", ""), "wild=fooXbarY"))
                    .isEqualTo("test-domain.wild_foo*bar*");
        }

        @Test
        void valueToMetricUsesTheRuntimeValue() {
            assertThat(label(wild("foo*", "    value_to_metric: true\n"), "wild=foo1"))
                    .isEqualTo("test-domain.wild_foo1");
            assertThat(label(wild("foo*bar*", "    value_to_metric: true\n"), "wild=foo123bar456"))
                    .isEqualTo("test-domain.wild_foo123bar456");
        }

        @Test
        void shareThresholdTakesPriorityOverValueToMetric() {
            assertThat(label(wild("foo*", "    share_threshold: true\n"), "wild=foo1"))
                    .isEqualTo("test-domain.wild_foo*");
            assertThat(label(wild("foo*", "    share_threshold: true\n    value_to_metric: true\n"), "wild=foo1"))
                    .isEqualTo("test-domain.wild_foo*");
        }

        @Test
        void valueToMetricInAnotherDescriptorPreservesThePattern() {
            DomainRules d = rules("""
                    domain: test-domain
                    descriptors:
                      - key: wild
                        value: foo*
                        descriptors:
                          - key: other
                            value_to_metric: true
                            descriptors:
                              - key: limit
                                rate_limit: {requests_per_unit: 20, unit: minute}
                    """);
            assertThat(label(d, "wild=foo1", "other=bar", "limit=X"))
                    .isEqualTo("test-domain.wild_foo*.other_bar.limit");
        }
    }

    @Test
    void testMetadata() {
        DomainRules d = upstream("metadata.yaml");
        assertThat(match(d, "key1=value1", "subkey1=something").rule().metadata())
                .isEqualTo(Map.of("name", "service_1"));
        assertThat(match(d, "key1=value1", "subkey1=subvalue1").rule().metadata())
                .isNull();
        assertThat(match(d, "key2=something").rule().metadata())
                .isEqualTo(Map.of("service_with_quota", Map.of("name", "service_2")));
        assertThat(label(d, "key1=value1", "subkey1=something")).isEqualTo("test-domain.key1_value1.subkey1");
    }
}
