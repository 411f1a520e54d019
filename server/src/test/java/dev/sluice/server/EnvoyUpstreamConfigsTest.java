package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.Match;
import dev.sluice.server.config.Rule;
import dev.sluice.server.config.RuleSet;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's own configuration files, copied unchanged into {@code src/test/resources/envoy-upstream}
 * (see its NOTICE.md): its integration runtime directory, its examples, the configurations of its README and the
 * fixtures of its loader tests. Each is loaded with the server's loader ({@link RuleSet#load}) as it is, and
 * gives the rules envoy gives; the files envoy's loader refuses are refused too, with a line.
 */
class EnvoyUpstreamConfigsTest {

    static Path upstream(String relative) {
        try {
            return Path.of(EnvoyUpstreamConfigsTest.class
                    .getResource("/envoy-upstream/" + relative)
                    .toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static RuleSet load(String... relative) {
        List<Path> paths = new ArrayList<>();
        for (String r : relative) {
            paths.add(upstream(r));
        }
        try {
            return RuleSet.load(paths);
        } catch (ConfigException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    static DomainRules domain(String file) {
        RuleSet rs = load(file);
        assertThat(rs.domains()).hasSize(1);
        return rs.domains().values().iterator().next();
    }

    static Match match(DomainRules d, String... kvs) {
        List<Entry> entries = new ArrayList<>();
        for (String kv : kvs) {
            int eq = kv.indexOf('=');
            entries.add(new Entry(kv.substring(0, eq), kv.substring(eq + 1)));
        }
        return d.match(entries);
    }

    static Rule rule(DomainRules d, String... kvs) {
        Match m = match(d, kvs);
        assertThat(m).as("a rule for %s in %s", List.of(kvs), d.domain()).isNotNull();
        return m.rule();
    }

    static Rule byId(DomainRules d, String id) {
        return d.rules().stream()
                .filter(r -> r.id().equals(id))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no rule " + id + " in "
                        + d.rules().stream().map(Rule::id).toList()));
    }

    // ---- test/integration/runtime/current/ratelimit: envoy's runtime directory, loaded as a directory

    @Test
    void theIntegrationRuntimeDirectoryLoadsAsADirectory() {
        RuleSet rs = load("test/integration/runtime/current/ratelimit/config");
        assertThat(rs.domains().keySet()).containsExactly("another", "basic", "share-threshold-test");
        assertThat(rs.files()).hasSize(3);

        DomainRules another = rs.domain("another");
        assertThat(another.rules())
                .extracting(Rule::id)
                .containsExactly(
                        "another.key2",
                        "another.key3",
                        "another.key2_local",
                        "another.key3_local",
                        "another.key4",
                        "another.key4_local");
        assertThat(rule(another, "key3=x").requestsPerUnit()).isEqualTo(10);
        assertThat(rule(another, "key3=x").unit()).isEqualTo("hour");
        assertThat(rule(another, "key4_local=x").unit()).isEqualTo("day");

        DomainRules basic = rs.domain("basic");
        assertThat(basic.rules()).hasSize(3);
        assertThat(rule(basic, "key1=anything").requestsPerUnit()).isEqualTo(50);
        assertThat(rule(basic, "key1=anything").unit()).isEqualTo("second");
        assertThat(rule(basic, "one_per_minute=x").requestsPerUnit()).isEqualTo(1);

        DomainRules share = rs.domain("share-threshold-test");
        assertThat(share.rules()).hasSize(2);
        assertThat(share.root().find("files", "files/a.pdf").shareThreshold()).isTrue();
        assertThat(share.root().find("files_no_share", "files_no_share/a.pdf").shareThreshold())
                .isFalse();
        assertThat(match(share, "files=files/a.pdf").keyEntries())
                .isEqualTo(match(share, "files=files/b.csv").keyEntries())
                .containsExactly(new Entry("files", "files/*"));
        assertThat(match(share, "files_no_share=files_no_share/a.pdf").keyEntries())
                .containsExactly(new Entry("files_no_share", "files_no_share/a.pdf"));
    }

    @Test
    void theReloadConfiguration() {
        DomainRules reload = domain("test/integration/runtime/current/ratelimit/reload.yaml");
        assertThat(reload.domain()).isEqualTo("reload");
        assertThat(reload.rules()).hasSize(3);
        assertThat(rule(reload, "block=x").kind()).isEqualTo(Rule.Kind.BLOCKED);
        assertThat(rule(reload, "key1=x").requestsPerUnit()).isEqualTo(50);
    }

    // ---- examples/ratelimit/config

    @Test
    void theExamplesDirectory() {
        RuleSet rs = load("examples/ratelimit/config");
        assertThat(rs.domains().keySet()).containsExactly("mongo_cps", "rl");

        DomainRules mongo = rs.domain("mongo_cps");
        assertThat(mongo.rules()).hasSize(2);
        assertThat(rule(mongo, "database=users").requestsPerUnit()).isEqualTo(500);
        assertThat(match(mongo, "database=other")).isNull();

        DomainRules rl = rs.domain("rl");
        assertThat(rl.rules()).hasSize(17);
        assertThat(byId(rl, "rl.category_account").replaces()).containsExactly("bkthomps", "fake_name");
        assertThat(byId(rl, "rl.foo.bar_banned").kind()).isEqualTo(Rule.Kind.BLOCKED);
        assertThat(byId(rl, "rl.foo.bar_banned").name()).isEqualTo("banned_limit");
        assertThat(byId(rl, "rl.foo.baz_shady").shadowMode()).isTrue();
        assertThat(byId(rl, "rl.foo.bay").kind()).isEqualTo(Rule.Kind.UNLIMITED);
        assertThat(byId(rl, "rl.unspec").detailedMetric()).isTrue();
        assertThat(match(rl, "unspec=someone").metricLabel()).isEqualTo("rl.unspec_someone");
        Rule quota = byId(rl, "rl.service_service_1");
        assertThat(quota.quotaMode()).isTrue();
        assertThat(quota.requestsPerUnit()).isEqualTo(1);
        assertThat(quota.metadata()).isEqualTo(Map.of("service_with_quota", Map.of("name", "service_1")));
        assertThat(byId(rl, "rl.service_service_2").metadata())
                .isEqualTo(Map.of("service_with_quota", Map.of("name", "service_2")));
        assertThat(rl.rules().stream().filter(Rule::quotaMode)).hasSize(2);
        assertThat(rule(rl, "source_cluster=proxy", "destination_cluster=bkthomps")
                        .replaces())
                .containsExactly("bkthomps");
    }

    // ---- README.md: its configuration examples

    @Test
    void everyReadmeExampleLoads() throws Exception {
        Path dir = upstream("README-examples");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.filter(f -> f.toString().endsWith(".yaml"))).hasSize(16);
        }
        // each one alone (several README examples reuse a domain)
        int[] rules = {2, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 2, 1};
        for (int i = 1; i <= 16; i++) {
            RuleSet rs = load("README-examples/example" + i + ".yaml");
            assertThat(rs.ruleCount()).as("example%d.yaml", i).isEqualTo(rules[i - 1]);
        }
    }

    /** README "Example N" is in exampleM.yaml: Example 4 has two configurations, so M = N + 1 from Example 5 on. */
    @Test
    void readmeExamples1To8() {
        DomainRules readme1 = domain("README-examples/example1.yaml");
        assertThat(rule(readme1, "database=users").requestsPerUnit()).isEqualTo(500);
        assertThat(rule(readme1, "database=default").unit()).isEqualTo("second");

        DomainRules readme2 = domain("README-examples/example2.yaml");
        assertThat(rule(readme2, "message_type=marketing", "to_number=2061111111")
                        .requestsPerUnit())
                .isEqualTo(5);
        assertThat(rule(readme2, "to_number=2061111111").unit()).isEqualTo("day");

        DomainRules readme3 = domain("README-examples/example3.yaml");
        assertThat(rule(readme3, "remote_address=50.0.0.1").requestsPerUnit()).isEqualTo(10);
        assertThat(rule(readme3, "remote_address=50.0.0.5").kind()).isEqualTo(Rule.Kind.BLOCKED);

        assertThat(match(domain("README-examples/example4.yaml"), "key=value", "subkey=subvalue"))
                .as("two entries never match a one-level rule")
                .isNull();
        assertThat(rule(domain("README-examples/example5.yaml"), "key=value", "subkey=subvalue")
                        .requestsPerUnit())
                .isEqualTo(300);

        DomainRules readme5 = domain("README-examples/example6.yaml");
        assertThat(rule(readme5, "ldap=x").kind()).isEqualTo(Rule.Kind.UNLIMITED);
        assertThat(rule(readme5, "azure=x").requestsPerUnit()).isEqualTo(100);

        DomainRules readme6 = domain("README-examples/example7.yaml");
        assertThat(rule(readme6, "service=auth-service", "user=user-a").shadowMode())
                .isTrue();
        assertThat(rule(readme6, "service=auth-service", "user=user-b").shadowMode())
                .isFalse();

        DomainRules readme7 = domain("README-examples/example8.yaml");
        assertThat(rule(readme7, "key_1=value_1", "user=bkthomps").name()).isEqualTo("specific_limit");
        assertThat(rule(readme7, "key_2=value_2", "user=bkthomps").replaces()).containsExactly("specific_limit");

        DomainRules readme8 = domain("README-examples/example9.yaml");
        assertThat(match(readme8, "key1=unspecified_value").metricLabel()).isEqualTo("example8.key1_unspecified_value");
        assertThat(match(readme8, "key1=unspecified_value2").metricLabel())
                .isEqualTo("example8.key1_unspecified_value2");
        assertThat(match(readme8, "key1=value1").metricLabel()).isEqualTo("example8.key1_value1");
        assertThat(rule(readme8, "key1=value1").requestsPerUnit()).isEqualTo(20);
    }

    @Test
    void readmeExample9Wildcards() {
        DomainRules trailing = domain("README-examples/example10.yaml");
        assertThat(match(trailing, "key1=value1")).isNotNull();
        assertThat(match(trailing, "key1=valueXYZ")).isNotNull();
        assertThat(match(trailing, "key1=other")).isNull();

        DomainRules middle = domain("README-examples/example11.yaml");
        assertThat(match(middle, "path=/api/123/action")).isNotNull();
        assertThat(match(middle, "path=/api/user-id/action")).isNotNull();
        assertThat(match(middle, "path=/api/123/other")).isNull();
        assertThat(match(middle, "path=/api/123/action").metricLabel()).isEqualTo("example9.path_/api/*/action");

        DomainRules multiple = domain("README-examples/example12.yaml");
        assertThat(match(multiple, "route=/api/v1/resource/123/action")).isNotNull();
        assertThat(match(multiple, "route=/api/v2/resource/456/action")).isNotNull();
        assertThat(match(multiple, "route=/api/v2/resource/456")).isNull();
    }

    @Test
    void readmeExample10ValueToMetric() {
        DomainRules ex = domain("README-examples/example13.yaml");
        assertThat(match(ex, "route=api", "http_method=GET", "subject_id=123").metricLabel())
                .isEqualTo("example10.route_api.http_method_GET.subject_id");
        assertThat(match(ex, "route=web", "http_method=POST", "subject_id=456").metricLabel())
                .isEqualTo("example10.route_web.http_method_POST.subject_id");
        DomainRules wildcard = domain("README-examples/example14.yaml");
        assertThat(match(wildcard, "user=alice", "action=readfile", "resource=documents")
                        .metricLabel())
                .isEqualTo("example10_wildcard.user_alice.action_readfile.resource");
    }

    @Test
    void readmeExample11ShareThreshold() {
        DomainRules ex = domain("README-examples/example15.yaml");
        assertThat(match(ex, "files=files/a.pdf").keyEntries())
                .isEqualTo(match(ex, "files=files/c.txt").keyEntries());
        assertThat(match(ex, "files_no_share=files_no_share/a.pdf").keyEntries())
                .isNotEqualTo(match(ex, "files_no_share=files_no_share/b.csv").keyEntries());
        assertThat(ex.root().find("files_no_share", "files_no_share/x").shareThreshold())
                .isFalse();
        // The README says 'example11_metrics.route_api.method_GET'; envoy's code (GetLimit, and its test
        // "share_threshold with metrics") gives the pattern and the key-only entry's key, as here.
        DomainRules metrics = domain("README-examples/example16.yaml");
        Match m = match(metrics, "route=api/v1", "method=GET");
        assertThat(m.metricLabel()).isEqualTo("example11_metrics.route_api/*.method");
        assertThat(m.keyEntries()).containsExactly(new Entry("route", "api/*"), new Entry("method", "GET"));
    }

    @Test
    void readmeExample11SharesOneCounterOverHttp() {
        try (TestServer s = TestServer.start("envoy-upstream/README-examples/example15.yaml")) {
            assertThat(s.post(TestServer.check("example11", 5, "files=files/a.pdf"))
                            .status())
                    .isEqualTo(200);
            assertThat(s.post(TestServer.check("example11", 5, "files=files/b.csv"))
                            .status())
                    .isEqualTo(200);
            TestServer.Resp c = s.check("example11", "files=files/c.txt");
            assertThat(c.status())
                    .as("the shared 10/hour is spent: %s", c.body())
                    .isEqualTo(429);
            assertThat(c.status(0).get("rule").asText()).isEqualTo("example11.files_files/*");

            assertThat(s.post(TestServer.check("example11", 10, "files_no_share=files_no_share/a.pdf"))
                            .status())
                    .isEqualTo(200);
            assertThat(s.check("example11", "files_no_share=files_no_share/a.pdf")
                            .status())
                    .isEqualTo(429);
            assertThat(s.check("example11", "files_no_share=files_no_share/b.csv")
                            .status())
                    .as("each value has its own 10/hour")
                    .isEqualTo(200);
            assertThat(s.get("/metrics").body()).contains("rule=\"example11.files_files/*\"");
        }
    }

    // ---- test/config: the fixtures of envoy's loader tests (config_test.go)

    @Test
    void theLoaderTestFixturesEnvoyAcceptsLoad() {
        assertThat(domain("test/config/basic_config.yaml").rules()).hasSize(10);
        assertThat(domain("test/config/shadowmode_config.yaml").rules()).hasSize(4);
        assertThat(domain("test/config/wildcard.yaml").rules()).hasSize(6);
        assertThat(domain("test/config/share_threshold.yaml").rules()).hasSize(13);
        assertThat(domain("test/config/metadata.yaml").rules()).hasSize(3);
        assertThat(domain("test/config/merge_domain_key1.yaml").rules()).hasSize(1);
        assertThat(domain("test/config/merge_domain_key2.yaml").rules()).hasSize(1);
        assertThat(domain("test/config/duplicate_domain.yaml").rules()).isEmpty();
        DomainRules share = domain("test/config/share_threshold.yaml");
        assertThat(share.rules().stream().filter(r -> r.requestsPerUnit() == 100))
                .hasSize(3);
    }

    /** envoy's error for the file (config_test.go), then Sluice's problem for it. */
    @Test
    void theLoaderTestFixturesEnvoyRefusesAreRefusedWithALine() {
        assertRefused(
                "bad_limit_unit.yaml", // invalid rate limit unit 'foo'
                ":6: unknown unit 'foo': use one of second, minute, hour, day, week, month, year");
        assertRefused(
                "bad_yaml.yaml", // error loading config file: yaml: line 2: found unexpected end of stream
                ": not valid YAML: found unexpected end of stream");
        assertRefused(
                "duplicate_key.yaml", // duplicate descriptor composite key 'test-domain.key1_value1'
                ":6: duplicate descriptor key 'key1' value 'value1' in the same list");
        assertRefused(
                "empty_domain.yaml", // config file cannot have empty domain
                ":1: missing 'domain'");
        assertRefused(
                "empty_key.yaml", // descriptor has empty key
                ":3: descriptor without a 'key'");
        assertRefused(
                "misspelled_key.yaml", // config error, unknown key 'ratelimit'
                ":5: unknown key 'ratelimit' in a descriptor");
        assertRefused(
                "misspelled_key2.yaml", // config error, unknown key 'requestsperunit'
                ":7: unknown key 'requestsperunit' in 'rate_limit'");
        assertRefused(
                "non_map_list.yaml", // config error, yaml file contains list of type other than map: a
                ":3: a descriptor must be a mapping");
        assertRefused(
                "non_string_key.yaml", // config error, key is not of type string: 0.25
                ":1: unknown key '0.25' in a rules document");
        assertRefused(
                "replaces_empty.yaml", // should not have an empty replaces entry
                ":10: 'replaces' entry without a 'name'");
        assertRefused(
                "replaces_self.yaml", // replaces should not contain name of same descriptor
                ":10: replaces should not contain name of same descriptor");
        assertRefused(
                "unlimited_with_unit.yaml", // should not specify rate limit unit when unlimited
                ":6: 'unit' with 'unlimited: true'");
    }

    @Test
    void aDomainInTwoFilesIsRefusedAsEnvoyDoesWithoutMergeDomainConfig() {
        // envoy: "duplicate domain 'test-domain' in config file" (MERGE_DOMAIN_CONFIG, which merges them, is not
        // offered)
        ConfigException e = catchThrowableOfType(
                ConfigException.class,
                () -> RuleSet.load(List.of(
                        upstream("test/config/basic_config.yaml"), upstream("test/config/duplicate_domain.yaml"))));
        assertThat(e).isNotNull();
        assertThat(e.getMessage()).contains("duplicate_domain.yaml:1: domain 'test-domain' is already defined at ");
    }

    private static void assertRefused(String fixture, String problem) {
        Path file = upstream("test/config/" + fixture);
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> RuleSet.load(List.of(file)));
        assertThat(e).as("%s is refused", fixture).isNotNull();
        assertThat(e.problems())
                .as(fixture)
                .anySatisfy(p -> assertThat(p)
                        .startsWith(file.toString())
                        .contains(problem)
                        .matches(".*\\.yaml:[1-9][0-9]*: .*"));
    }
}
