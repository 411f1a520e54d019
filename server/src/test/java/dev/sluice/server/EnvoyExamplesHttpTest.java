package dev.sluice.server;

import static dev.sluice.server.TestServer.check;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The configuration examples of envoyproxy/ratelimit's README (rewritten as our own fixtures under
 * src/test/resources/envoy) behave as envoy documents them, over real HTTP against the in-memory store.
 * Time stands still (manual clock at a window boundary), so counts are exact.
 */
class EnvoyExamplesHttpTest {
    static TestServer s;

    @BeforeAll
    static void start() {
        s = TestServer.start(
                "envoy/example1.yaml",
                "envoy/example2.yaml",
                "envoy/example3.yaml",
                "envoy/example4.yaml",
                "envoy/example5.yaml",
                "envoy/example6.yaml",
                "envoy/example7.yaml",
                "envoy/example8.yaml",
                "envoy/example9.yaml");
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static void admit(int n, String domain, String... descriptors) {
        for (int i = 0; i < n; i++) {
            TestServer.Resp r = s.check(domain, descriptors);
            assertThat(r.status())
                    .as("request %d of %d: %s", i + 1, n, r.body())
                    .isEqualTo(200);
        }
    }

    @Test
    void example1EachValueHasItsOwn500PerSecond() {
        TestServer.Resp first = s.check("mongo_cps", "database=users");
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.status(0).get("remaining").asLong()).isEqualTo(499);
        assertThat(first.status(0).get("limit").get("requests_per_unit").asLong())
                .isEqualTo(500);
        TestServer.Resp bulk = s.post(check("mongo_cps", 499, "database=users"));
        assertThat(bulk.status()).isEqualTo(200);
        assertThat(bulk.status(0).get("remaining").asLong()).isZero();
        TestServer.Resp over = s.check("mongo_cps", "database=users");
        assertThat(over.status()).isEqualTo(429);
        assertThat(over.json().get("overall_code").asText()).isEqualTo("OVER_LIMIT");
        assertThat(s.check("mongo_cps", "database=default").status()).isEqualTo(200);
        TestServer.Resp unmatched = s.check("mongo_cps", "database=other");
        assertThat(unmatched.status()).isEqualTo(200);
        assertThat(unmatched.status(0).get("outcome").asText()).isEqualTo("no_rule");
        assertThat(unmatched.header("RateLimit")).isNull();
    }

    @Test
    void example2NestedRuleAndPerValueLimitsAllOrNothing() {
        String marketing = "message_type=marketing,to_number=2061111111";
        String number = "to_number=2061111111";
        for (int i = 1; i <= 5; i++) {
            TestServer.Resp r = s.check("messaging", marketing, number);
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            assertThat(r.status(0).get("rule").asText()).isEqualTo("messaging.message_type_marketing.to_number");
            assertThat(r.status(1).get("rule").asText()).isEqualTo("messaging.to_number");
        }
        TestServer.Resp sixth = s.check("messaging", marketing, number);
        assertThat(sixth.status()).isEqualTo(429);
        // all or nothing: the denied request did not count against the 100/day of the number
        TestServer.Resp rest = s.post(check("messaging", 95, number));
        assertThat(rest.status()).as(rest.body()).isEqualTo(200);
        assertThat(rest.status(0).get("remaining").asLong()).isZero();
        assertThat(s.check("messaging", number).status()).isEqualTo(429);
        // another number has its own buckets
        assertThat(s.check("messaging", "message_type=marketing,to_number=2062222222")
                        .status())
                .isEqualTo(200);
    }

    @Test
    void example3KeyValueBeatsKeyAndZeroBlocks() {
        admit(10, "edge_proxy_per_ip", "remote_address=50.0.0.1");
        TestServer.Resp eleventh = s.check("edge_proxy_per_ip", "remote_address=50.0.0.1");
        assertThat(eleventh.status()).isEqualTo(429);
        assertThat(eleventh.header("Retry-After")).isEqualTo("1");
        TestServer.Resp banned = s.check("edge_proxy_per_ip", "remote_address=50.0.0.5");
        assertThat(banned.status()).isEqualTo(429);
        assertThat(banned.status(0).get("outcome").asText()).isEqualTo("blocked");
        assertThat(banned.status(0).get("rule").asText()).isEqualTo("edge_proxy_per_ip.remote_address_50.0.0.5");
        // a blocked descriptor denies the whole request, and nothing is taken for the others
        TestServer.Resp both = s.check("edge_proxy_per_ip", "remote_address=50.0.0.5", "remote_address=50.0.0.2");
        assertThat(both.status()).isEqualTo(429);
        assertThat(both.status(1).get("outcome").asText()).isEqualTo("skipped");
        assertThat(s.check("edge_proxy_per_ip", "remote_address=50.0.0.2")
                        .status(0)
                        .get("remaining")
                        .asLong())
                .isEqualTo(9);
    }

    @Test
    void example4RuleOnlyAtTheDepthOfTheLastEntry() {
        TestServer.Resp deeper = s.check("example4", "key=value,subkey=subvalue");
        assertThat(deeper.status()).isEqualTo(200);
        assertThat(deeper.status(0).get("outcome").asText()).isEqualTo("no_rule");
        TestServer.Resp nested = s.check("example4", "nested=value,subkey=subvalue");
        assertThat(nested.status(0).get("rule").asText()).isEqualTo("example4.nested_value.subkey");
        assertThat(nested.status(0).get("remaining").asLong()).isEqualTo(299);
        assertThat(s.check("example4", "key=value").status(0).get("remaining").asLong())
                .isEqualTo(299);
    }

    @Test
    void example5UnlimitedIsAnsweredWithoutALimit() {
        for (int i = 0; i < 3; i++) {
            TestServer.Resp r = s.check("internal", "ldap=anything");
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.status(0).get("outcome").asText()).isEqualTo("unlimited");
        }
        assertThat(s.check("internal", "azure=x").status(0).get("remaining").asLong())
                .isEqualTo(99);
    }

    @Test
    void example6ShadowModeNeverDenies() {
        admit(12, "example6", "service=auth,user=user-a");
        TestServer.Resp shadow = s.check("example6", "service=auth,user=user-a");
        assertThat(shadow.status()).isEqualTo(200);
        assertThat(shadow.status(0).get("outcome").asText()).isEqualTo("shadow_over_limit");
        assertThat(shadow.status(0).get("shadow_mode").asBoolean()).isTrue();
        admit(20, "example6", "service=auth,user=user-b");
        assertThat(s.check("example6", "service=auth,user=user-b").status()).isEqualTo(429);
        assertThat(s.get("/metrics").body())
                .contains(
                        "sluice_decisions_total{domain=\"example6\",outcome=\"shadow_over_limit\",rule=\"example6.service.user_user-a\"}");
    }

    @Test
    void example7ReplacesDropsTheReplacedRule() {
        String one = "key_1=value_1,user=bkthomps";
        String two = "key_2=value_2,user=bkthomps";
        for (int i = 0; i < 10; i++) {
            TestServer.Resp r = s.check("example7", one, two);
            assertThat(r.status()).as("request %d: %s", i + 1, r.body()).isEqualTo(200);
            assertThat(r.status(0).get("outcome").asText()).isEqualTo("no_rule");
        }
        assertThat(s.check("example7", one, two).status()).isEqualTo(429);
        // the replaced 5/s limit was never touched
        admit(5, "example7", one);
        assertThat(s.check("example7", one).status()).isEqualTo(429);
    }

    @Test
    void example8DetailedMetricLabelsByValue() {
        s.check("example8", "key1=unspecified_value");
        s.check("example8", "key1=value1");
        String metrics = s.get("/metrics").body();
        assertThat(metrics)
                .contains("rule=\"example8.key1_unspecified_value\"")
                .contains("rule=\"example8.key1_value1\"");
        assertThat(s.check("example8", "key1=value1")
                        .status(0)
                        .get("limit")
                        .get("requests_per_unit")
                        .asLong())
                .isEqualTo(20);
    }

    @Test
    void example9WildcardValuesCountPerValue() {
        admit(20, "example9", "key1=value1");
        assertThat(s.check("example9", "key1=value1").status()).isEqualTo(429);
        JsonNode other = s.check("example9", "key1=value2").status(0);
        assertThat(other.get("rule").asText()).isEqualTo("example9.key1_value*");
        assertThat(other.get("remaining").asLong()).isEqualTo(19);
        assertThat(s.check("example9", "key1=nomatch").status(0).get("outcome").asText())
                .isEqualTo("no_rule");
    }
}
