package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The dashboard over plain HTTP (its page in a real browser is {@link DashboardBrowserTest}): the page and its files,
 * the data of {@code GET /v1/dashboard} after real traffic, the token, and keys that callers make hostile.
 */
class DashboardHttpTest {

    static JsonNode data(TestServer s, String... headers) {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(s.base + "/v1/dashboard")).timeout(Duration.ofSeconds(10));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        TestServer.Resp r = TestServer.send(b.GET().build());
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        assertThat(r.header("Cache-Control")).isEqualTo("no-store");
        return r.json();
    }

    static JsonNode series(JsonNode data, String domain, String rule) {
        for (JsonNode s : data.get("series")) {
            if (s.get("domain").asText().equals(domain)
                    && s.get("rule").asText().equals(rule)) {
                return s;
            }
        }
        throw new AssertionError("no series " + domain + " " + rule + " in " + data.get("series"));
    }

    static List<String> topKeys(JsonNode data) {
        List<String> keys = new ArrayList<>();
        data.get("top_denied")
                .get("keys")
                .forEach(k ->
                        keys.add(k.get("key").asText() + " " + k.get("count").asLong()));
        return keys;
    }

    static void times(int n, Runnable r) {
        for (int i = 0; i < n; i++) {
            r.run();
        }
    }

    @Test
    void thePageAndItsFilesAreServedWithAStrictPolicy() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            for (String path : List.of("/", "/ui")) {
                TestServer.Resp page = s.get(path);
                assertThat(page.status()).isEqualTo(200);
                assertThat(page.header("Content-Type")).isEqualTo("text/html; charset=utf-8");
                assertThat(page.body())
                        .contains(
                                "<title>Sluice dashboard</title>",
                                "src=\"ui/dashboard-tables.js\"",
                                "src=\"ui/dashboard.js\"");
                assertThat(page.header("Content-Security-Policy"))
                        .contains("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'");
                assertThat(page.header("X-Content-Type-Options")).isEqualTo("nosniff");
            }
            TestServer.Resp js = s.get("/ui/dashboard.js");
            assertThat(js.status()).isEqualTo(200);
            assertThat(js.header("Content-Type")).isEqualTo("text/javascript; charset=utf-8");
            assertThat(js.body()).contains("v1/dashboard").doesNotContain("innerHTML");
            TestServer.Resp tables = s.get("/ui/dashboard-tables.js");
            assertThat(tables.status()).isEqualTo(200);
            assertThat(tables.header("Content-Type")).isEqualTo("text/javascript; charset=utf-8");
            assertThat(tables.body()).contains("window.SluiceTables").doesNotContain("innerHTML");
            assertThat(s.get("/ui/dashboard.css").header("Content-Type")).isEqualTo("text/css; charset=utf-8");

            TestServer.Resp post = TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build());
            assertThat(post.status()).isEqualTo(405);
            assertThat(post.header("Allow")).isEqualTo("GET");
            assertThat(s.get("/ui/other.js").status()).isEqualTo(404);
        }
    }

    @Test
    void theDataListsTheRulesAndCountsDecisionsAndDeniedKeys() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            times(10, () -> s.check("shop", "user=hot")); // 3 admitted, 7 denied
            times(4, () -> s.check("shop", "user=bob")); // 3 admitted, 1 denied
            s.check("shop", "user=carol"); // admitted
            times(2, () -> s.check("shop", "path=/checkout")); // shadow mode: 2 admitted
            times(4, () -> s.check("shop", "path=/checkout")); // shadow over limit: answered OK, not a denial
            times(2, () -> s.check("shop", "ip=203.0.113.7")); // blocked: 2 denied
            s.post(TestServer.check("shop", 0, "user=hot")); // check only: not a denial
            s.check("api", "status=x"); // unlimited: admitted

            JsonNode d = data(s);
            assertThat(d.get("clock_ms").isIntegralNumber()).isTrue();
            JsonNode user = null;
            List<String> ids = new ArrayList<>();
            for (JsonNode r : d.get("rules")) {
                ids.add(r.get("domain").asText() + " " + r.get("id").asText());
                if (r.get("id").asText().equals("shop.user")) {
                    user = r;
                }
            }
            assertThat(ids)
                    .containsExactly(
                            "shop shop.user",
                            "shop shop.path_/checkout",
                            "shop shop.ip_203.0.113.7",
                            "shop shop.tenant",
                            "api api.plan_pro.user",
                            "api api.report",
                            "api api.status");
            assertThat(user.get("name").asText()).isEqualTo("per_user");
            assertThat(user.get("kind").asText()).isEqualTo("limited");
            assertThat(user.get("algorithm").asText()).isEqualTo("fixed_window");
            assertThat(user.get("requests_per_unit").asLong()).isEqualTo(3);
            assertThat(user.get("unit").asText()).isEqualTo("minute");
            assertThat(user.get("capacity").asLong()).isEqualTo(3);
            assertThat(user.get("shadow_mode").asBoolean()).isFalse();

            JsonNode users = series(d, "shop", "shop.user");
            assertThat(users.get("ok").asLong()).isEqualTo(7);
            assertThat(users.get("over_limit").asLong()).isEqualTo(8);
            assertThat(users.get("checked").asLong()).isEqualTo(1);
            JsonNode checkout = series(d, "shop", "shop.path_/checkout");
            assertThat(checkout.get("ok").asLong()).isEqualTo(2);
            assertThat(checkout.get("shadow_over_limit").asLong()).isEqualTo(4);
            assertThat(series(d, "shop", "shop.ip_203.0.113.7").get("blocked").asLong())
                    .isEqualTo(2);
            assertThat(series(d, "api", "api.status").get("unlimited").asLong()).isEqualTo(1);

            JsonNode top = d.get("top_denied");
            assertThat(top.get("window_seconds").asInt()).isEqualTo(60);
            assertThat(top.get("step_seconds").asInt()).isEqualTo(10);
            assertThat(top.get("denials").asLong()).isEqualTo(10);
            assertThat(topKeys(d)).containsExactly("shop|user=hot 7", "shop|ip=203.0.113.7 2", "shop|user=bob 1");
            JsonNode hot = top.get("keys").get(0);
            assertThat(hot.get("lower").asLong()).isEqualTo(7);
            assertThat(hot.get("upper").asLong()).isEqualTo(7);

            JsonNode store = d.get("store");
            assertThat(store.get("name").asText()).isEqualTo("memory");
            assertThat(store.get("healthy").asBoolean()).isTrue();
            assertThat(store.get("cause").isNull()).isTrue();
            assertThat(store.get("opened").asBoolean()).isTrue();
            assertThat(store.get("failure_policy").isNull()).isTrue();
            assertThat(store.get("degraded").isNull()).isTrue();
        }
    }

    @Test
    void denialsOnEnvoysApisCountToo() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            String body =
                    "{\"domain\":\"shop\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"envoy\"}]}]}";
            List<Integer> codes = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                codes.add(TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/json"))
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build())
                        .status());
            }
            assertThat(codes).containsExactly(200, 200, 200, 429, 429);
            assertThat(topKeys(data(s))).containsExactly("shop|user=envoy 2");
        }
    }

    @Test
    void deniedKeysAgeOutOnTheServicesClock() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            times(5, () -> s.check("shop", "user=hot"));
            assertThat(topKeys(data(s))).containsExactly("shop|user=hot 2");
            s.clock().advance(Duration.ofSeconds(59));
            assertThat(topKeys(data(s))).containsExactly("shop|user=hot 2");
            s.clock().advance(Duration.ofSeconds(1));
            JsonNode d = data(s);
            assertThat(topKeys(d)).isEmpty();
            assertThat(d.get("top_denied").get("denials").asLong()).isZero();
            assertThat(series(d, "shop", "shop.user").get("over_limit").asLong())
                    .as("the totals stay")
                    .isEqualTo(2);
        }
    }

    @Test
    void theDataNeedsTheTokenThePageDoesNot() {
        try (TestServer s = TestServer.start(x -> x.withToken("s3cret"), "dashboard-rules.yaml")) {
            assertThat(s.get("/").status()).isEqualTo(200);
            assertThat(s.get("/ui/dashboard.js").status()).isEqualTo(200);
            assertThat(s.get("/ui/dashboard-tables.js").status()).isEqualTo(200);
            TestServer.Resp refused = s.get("/v1/dashboard");
            assertThat(refused.status()).isEqualTo(401);
            assertThat(refused.header("WWW-Authenticate")).isEqualTo("Bearer");
            assertThat(TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/dashboard"))
                                    .header("Authorization", "Bearer wrong")
                                    .GET()
                                    .build())
                            .status())
                    .isEqualTo(401);
            assertThat(data(s, "Authorization", "Bearer s3cret").get("rules").size())
                    .isEqualTo(7);
        }
    }

    @Test
    void hostileKeysComeBackAsPlainBoundedJsonStrings() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            // a lone surrogate, markup and a 3,000-character value, each denied once
            for (String value : List.of("\\ud800lone", "<script>alert(1)</script>", "v".repeat(3000))) {
                times(
                        4,
                        () -> s.post(
                                "{\"domain\":\"shop\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\""
                                        + value + "\"}]}]}"));
            }
            List<String> keys = new ArrayList<>();
            data(s).get("top_denied")
                    .get("keys")
                    .forEach(k -> keys.add(k.get("key").asText()));
            assertThat(keys).hasSize(3).contains("shop|user=\uFFFDlone", "shop|user=<script>alert(1)</script>");
            assertThat(keys)
                    .anySatisfy(k -> assertThat(k)
                            .hasSize(257)
                            .startsWith("shop|user=vvv")
                            .endsWith("v…"));
        }
    }
}
