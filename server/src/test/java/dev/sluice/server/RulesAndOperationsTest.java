package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.server.cli.SluiceCommand;
import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.tck.Eventually;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rules validation with file:line, hot reload that keeps good rules, store failures, the CLI's validate. */
class RulesAndOperationsTest {

    @Test
    void everyProblemIsReportedWithItsLine() {
        String yaml = """
                domain: bad
                descriptors:
                  - key: a
                    rate_limit:
                      unit: fortnight
                      requests_per_unit: 10
                  - key: b
                    shadow_mod: true
                    rate_limit:
                      unit: second
                  - value: orphan
                  - key: c
                    rate_limit:
                      algorithm: fixed_window
                      burst: 5
                      window: 90q
                      requests_per_unit: 3
                  - key: a
                    rate_limit:
                      unit: second
                      requests_per_unit: 1
                """;
        assertThatThrownBy(() -> RuleSet.parse("rules.yaml", yaml))
                .isInstanceOfSatisfying(
                        ConfigException.class,
                        e -> assertThat(e.problems())
                                .containsExactly(
                                        "rules.yaml:5: unknown unit 'fortnight': use one of second, minute, hour, day, week, month, year, or 'window: 90s' for any length",
                                        "rules.yaml:8: unknown key 'shadow_mod' in a descriptor: expected one of charge_on_stream_done, descriptors, detailed_metric, key, metadata, quota_mode, rate_limit, reservation, shadow_mode, share_threshold, value, value_to_metric",
                                        "rules.yaml:10: 'rate_limit' without 'requests_per_unit': say how many requests, e.g. 'requests_per_unit: 100' (or 'unlimited: true')",
                                        "rules.yaml:11: descriptor without a 'key': every entry needs one, e.g. 'key: remote_address'",
                                        "rules.yaml:15: 'burst' applies to token_bucket and gcra, not fixed_window: remove it or set 'algorithm: token_bucket'",
                                        "rules.yaml:16: duration '90q' is not understood: write a number and a unit (ns, us, ms, s, m, h, d, w), e.g. 90s, 1500ms, 1h30m",
                                        "rules.yaml:18: duplicate descriptor key 'a' in the same list: each key/value pair may appear once per level"));
    }

    @Test
    void theBuiltInExampleAnswersTheReadmeCall() {
        try (TestServer s = TestServer.start("sluice-example.yaml")) {
            TestServer.Resp r = s.post(
                    "{\"domain\":\"example\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"alice\"}]}]}");
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.status(0).get("remaining").asLong()).isEqualTo(9);
            assertThat(s.check("api", "plan=pro,user=7")
                            .status(0)
                            .get("limit")
                            .get("algorithm")
                            .asText())
                    .isEqualTo("gcra");
            assertThat(s.check("api", "remote_address=203.0.113.7").status()).isEqualTo(429);
        }
    }

    @Test
    void callerSentLimitsAreBounded() {
        try (TestServer s = TestServer.start("envoy/example5.yaml")) {
            s.server.service().maxClientLimits(2);
            for (int rpu = 1; rpu <= 2; rpu++) {
                assertThat(s.post(withLimit(rpu)).status()).isEqualTo(200);
            }
            assertThat(s.post(withLimit(1)).status())
                    .as("a known limit is still accepted (and its 1/hour is spent)")
                    .isEqualTo(429);
            TestServer.Resp third = s.post(withLimit(3));
            assertThat(third.status()).isEqualTo(400);
            BadInputHttpTest.assertProblem(third, "too-many-client-limits", "already use 2 distinct limits");
            s.server.service().maxClientLimits(0);
            BadInputHttpTest.assertProblem(s.post(withLimit(1)), "client-limits-disabled", "refuses");
        }
    }

    private static String withLimit(int rpu) {
        return "{\"domain\":\"internal\",\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"value\":\"v\"}],"
                + "\"limit\":{\"requests_per_unit\":" + rpu + ",\"unit\":\"hour\"}}]}";
    }

    @Test
    void aDomainMayBeDefinedOnce(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), "domain: d\ndescriptors:\n  - key: k\n");
        Files.writeString(dir.resolve("b.yaml"), "domain: d\ndescriptors:\n  - key: j\n");
        assertThatThrownBy(() -> RuleSet.load(List.of(dir)))
                .hasMessageContaining("b.yaml:1: domain 'd' is already defined at " + dir.resolve("a.yaml") + ":1");
    }

    @Test
    void validateCommandPrintsProblemsAndExitsOne(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(
                bad,
                "domain: x\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: second\n      requests_per_unit: -3\n");
        Path good = dir.resolve("good.yaml");
        Files.writeString(good, TestServer.resource("envoy/example2.yaml"));
        PrintStream err = System.err;
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            assertThat(SluiceCommand.commandLine().execute("validate", bad.toString()))
                    .isEqualTo(1);
            assertThat(captured.toString(StandardCharsets.UTF_8))
                    .contains(bad + ":6: 'requests_per_unit' -3 is negative");
            captured.reset();
            assertThat(SluiceCommand.commandLine().execute("validate", good.toString()))
                    .isZero();
            assertThat(captured.toString(StandardCharsets.UTF_8)).contains("ok  domain messaging: 2 rules");
            captured.reset();
            assertThat(SluiceCommand.commandLine().execute("migrate")).isEqualTo(2);
            assertThat(captured.toString(StandardCharsets.UTF_8)).contains("nothing to migrate");
            captured.reset();
            assertThat(SluiceCommand.commandLine()
                            .execute(
                                    "serve",
                                    "--store",
                                    "cassandra://127.0.0.1",
                                    "--http",
                                    "127.0.0.1:0",
                                    "--grpc",
                                    "off"))
                    .isEqualTo(2);
            assertThat(captured.toString(StandardCharsets.UTF_8)).contains("unknown store 'cassandra://127.0.0.1'");
            captured.reset();
            assertThat(SluiceCommand.commandLine().execute("serve", "--config", bad.toString()))
                    .isEqualTo(1);
            assertThat(captured.toString(StandardCharsets.UTF_8))
                    .contains("event=rules_problem problem=\"" + bad + ":6: 'requests_per_unit' -3 is negative")
                    .contains("event=start_refused reason=\"1 problem(s) in the rules\"");
        } finally {
            System.setErr(err);
            System.setOut(out);
        }
    }

    @Test
    void checkCommandAsksARunningServiceAndExitsByTheAnswer() {
        try (TestServer s = TestServer.start("envoy/example3.yaml")) {
            PrintStream out = System.out;
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            try {
                System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
                assertThat(SluiceCommand.commandLine()
                                .execute(
                                        "check",
                                        "--url",
                                        s.base,
                                        "--domain",
                                        "edge_proxy_per_ip",
                                        "remote_address=50.0.0.1"))
                        .isZero();
                assertThat(captured.toString(StandardCharsets.UTF_8))
                        .contains("HTTP 200")
                        .contains("RateLimit: \"edge_proxy_per_ip.remote_address\";r=9;t=1");
                assertThat(SluiceCommand.commandLine()
                                .execute(
                                        "check",
                                        "--url",
                                        s.base,
                                        "--domain",
                                        "edge_proxy_per_ip",
                                        "remote_address=50.0.0.5"))
                        .isEqualTo(1);
                assertThat(SluiceCommand.commandLine().execute("check", "--url", s.base, "--domain", "nope", "a=b"))
                        .isEqualTo(2);
            } finally {
                System.setOut(out);
            }
        }
    }

    @Test
    void hotReloadAppliesGoodRulesAndKeepsThemOnABadFile(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(
                rules,
                "domain: live\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 1\n");
        try (TestServer s = TestServer.start(
                t -> t.withConfigPaths(List.of(rules), Duration.ofMillis(50)), "envoy/example5.yaml")) {
            s.server.reload();
            assertThat(s.check("live", "k=1").status()).isEqualTo(200);
            assertThat(s.check("live", "k=1").status()).isEqualTo(429);

            Files.writeString(
                    rules,
                    "domain: live\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 3\n");
            // the server's watcher polls on the system scheduler (WatchersTest steps one on a manual one)
            Eventually.await(
                    Duration.ofSeconds(10),
                    "the watcher picked up the change",
                    () -> s.check("live", "k=2")
                                    .status(0)
                                    .get("limit")
                                    .get("requests_per_unit")
                                    .asLong()
                            == 3);

            Files.writeString(rules, "domain: live\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: eon\n");
            assertThat(s.server.reload()).isFalse();
            assertThat(s.check("live", "k=3")
                            .status(0)
                            .get("limit")
                            .get("requests_per_unit")
                            .asLong())
                    .isEqualTo(3);
            assertThat(s.get("/metrics").body()).contains("sluice_config_reloads_total{result=\"refused\"}");
        }
    }

    /**
     * A rule's state belongs to its name (its domain and descriptor path, or its {@code name}), not to its numbers:
     * a reload that tightens it keeps what each key spent (no fresh burst during an incident), one that loosens it
     * gives back no more than the new numbers minus what was spent.
     */
    @Test
    void aReloadThatTightensARuleKeepsWhatWasSpent(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("rules.yaml");
        String rule = """
                domain: live
                descriptors:
                  - key: k
                    rate_limit:
                      algorithm: %s
                      unit: hour
                      requests_per_unit: %d
                """;
        for (String algorithm : List.of("fixed_window", "token_bucket", "sliding_log")) {
            Files.writeString(rules, rule.formatted(algorithm, 5));
            try (TestServer s = TestServer.start(
                    t -> t.withConfigPaths(List.of(rules), Duration.ofHours(1)), "envoy/example5.yaml")) {
                assertThat(s.server.reload()).isTrue();
                for (int i = 0; i < 5; i++) {
                    assertThat(s.check("live", "k=1").status()).isEqualTo(200);
                }
                Files.writeString(rules, rule.formatted(algorithm, 3));
                assertThat(s.server.reload()).isTrue();
                assertThat(s.check("live", "k=1").status())
                        .as("%s tightened to 3 with 5 spent", algorithm)
                        .isEqualTo(429);
                assertThat(s.check("live", "k=2").status())
                        .as("another key is fresh")
                        .isEqualTo(200);
                Files.writeString(rules, rule.formatted(algorithm, 8));
                assertThat(s.server.reload()).isTrue();
                int admitted = 0;
                while (s.check("live", "k=1").status() == 200) {
                    admitted++;
                }
                assertThat(admitted)
                        .as("%s loosened to 8 with 5 spent", algorithm)
                        .isEqualTo(3);
            }
        }
    }

    /** A store that takes its time: a call waits until the test releases it (30 s at most, a hang guard). */
    static final class SlowStore implements RateLimiter {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            entered.countDown();
            try {
                boolean unused = release.await(30, TimeUnit.SECONDS); // false: the guard passed, answer anyway
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new Decision(true, limit == null ? 1 : limit.capacity(), 0, 0, 0);
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            return tryAcquire(key, limit, cost);
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return CompletableFuture.supplyAsync(() -> tryAcquire(key, limit, cost));
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            return tryAcquire("k", null, 1);
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            return tryAcquire(key, limit, cost);
        }

        @Override
        public void reset(String key, Limit limit) {}

        @Override
        public void close() {}
    }

    @Test
    void aStoreThatIsDownIs503WithAProblemAndHealthStaysUp() {
        try (TestServer s = TestServer.startWith(
                new DownStore(),
                t -> t.withStore(t.limiter(), "down", Duration.ofMillis(500)),
                "envoy/example5.yaml")) {
            TestServer.Resp r = s.check("internal", "azure=x");
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.header("Retry-After")).isEqualTo("1");
            BadInputHttpTest.assertProblem(r, "store-error", "the down store failed: connection refused");
            assertThat(s.get("/readyz").status()).isEqualTo(503);
            assertThat(s.get("/healthz").status()).isEqualTo(200);
            // unlimited descriptors never reach the store
            assertThat(s.check("internal", "ldap=x").status()).isEqualTo(200);
        }
    }

    @Test
    void shutdownLetsInFlightRequestsFinish() throws Exception {
        SlowStore store = new SlowStore();
        TestServer s = TestServer.startWith(
                store, t -> t.withStore(t.limiter(), "slow", Duration.ofSeconds(5)), "envoy/example5.yaml");
        var pending = TestServer.CLIENT.sendAsync(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.base + "/v1/check"))
                        .header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                TestServer.check("internal", -1, "azure=x")))
                        .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(store.entered.await(10, TimeUnit.SECONDS))
                .as("the request waits on the store")
                .isTrue();
        int port = s.server.httpAddress().getPort();
        Thread closing = new Thread(s::close);
        closing.start();
        // close() stops listening first, then waits for the request in flight: release the store once it waits
        Eventually.await(Duration.ofSeconds(10), "the server no longer listening", () -> {
            try {
                new java.net.Socket(InetAddress.getLoopbackAddress(), port).close();
                return false;
            } catch (java.io.IOException refused) {
                return true;
            }
        });
        assertThat(pending).as("the request in flight is still waiting").isNotDone();
        store.release.countDown();
        var resp = pending.get(10, TimeUnit.SECONDS);
        closing.join(10_000);
        assertThat(resp.statusCode()).isEqualTo(200);
        assertThat(resp.headers().firstValue("Connection")).hasValue("close");
        assertThatThrownBy(() -> s.get("/healthz"))
                .as("no longer listening")
                .isInstanceOf(java.io.UncheckedIOException.class);
    }

    /**
     * A store where keys containing "slow" are decided once another key was, or after 400 ms when none comes (a server
     * may decide a connection's pipelined requests one after the other), and report remaining 1; others are decided at
     * once, remaining 2: a slow request sent first is decided last whenever the two are decided together.
     */
    static final class KeyedSlowStore extends DownStore {
        private final CountDownLatch fastDecided = new CountDownLatch(1);

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            boolean slow = key.contains("slow");
            if (slow) {
                try {
                    boolean unused = fastDecided.await(400, TimeUnit.MILLISECONDS); // false: decided one by one
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            } else {
                fastDecided.countDown();
            }
            return new Decision(true, limit.capacity(), slow ? 1 : 2, 0, 0);
        }

        /** The same answers, asynchronously: the slow ones complete after a fast one, on another thread. */
        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return key.contains("slow")
                    ? CompletableFuture.supplyAsync(() -> tryAcquire(key, limit, cost))
                    : CompletableFuture.completedFuture(tryAcquire(key, limit, cost));
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrderEvenWhenDecidedOutOfOrder() throws Exception {
        try (TestServer s = TestServer.startWith(
                        new KeyedSlowStore(),
                        t -> t.withStore(t.limiter(), "keyed", Duration.ofSeconds(5)),
                        "envoy/example5.yaml");
                java.net.Socket c = new java.net.Socket(
                        InetAddress.getLoopbackAddress(), s.server.httpAddress().getPort())) {
            c.setSoTimeout(10_000);
            StringBuilder both = new StringBuilder();
            for (String user : List.of("slow", "fast")) {
                String body = TestServer.check("internal", -1, "azure=" + user);
                both.append("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ")
                        .append(body.length())
                        .append("\r\n\r\n")
                        .append(body);
            }
            c.getOutputStream().write(both.toString().getBytes(StandardCharsets.US_ASCII));
            c.getOutputStream().flush();
            StringBuilder got = new StringBuilder();
            byte[] buf = new byte[8192];
            while (got.toString().split("HTTP/1.1 200", -1).length - 1 < 2) {
                int n = c.getInputStream().read(buf);
                assertThat(n).isPositive();
                got.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
            }
            String all = got.toString();
            assertThat(all.indexOf("\"remaining\":1"))
                    .as("the slow first request is answered first")
                    .isLessThan(all.indexOf("\"remaining\":2"));
        }
    }

    @Test
    void aSlowStoreIsCutOffAtTheStoreTimeout() {
        SlowStore store = new SlowStore();
        try (TestServer s = TestServer.startWith(
                store, t -> t.withStore(t.limiter(), "slow", Duration.ofMillis(150)), "envoy/example5.yaml")) {
            TestServer.Resp r = s.check("internal", "azure=x");
            assertThat(r.status()).isEqualTo(503);
            BadInputHttpTest.assertProblem(
                    r,
                    "store-timeout",
                    "did not answer within " + (150 + DecisionService.DEADLINE_SLACK_MILLIS)
                            + " ms (1 call(s) of its budget, --store-timeout 150 ms");
            assertThat(s.get("/metrics").body()).contains("sluice_store_errors_total{kind=\"timeout\"} 1.0");
        } finally {
            store.release.countDown();
        }
    }
}
