package dev.sluice.server.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.StoreException;
import dev.sluice.client.RemoteRateLimiter;
import dev.sluice.client.RemoteRateLimiterException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.redis.RedisRateLimiter;
import dev.sluice.redis.RedisServer;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RemoteRateLimiter} as a remote store: its failures are {@link StoreException}s classified by cause, every
 * call is bounded by its time budget, and a decision the service made in a degraded mode reaches the caller with
 * its cause. Real sockets throughout: a real service whose Redis is down, a port nothing listens on, a server that
 * accepts and never answers, and a plain HTTP server answering the error statuses a proxy or the service may send.
 */
class RemoteFailuresTest {
    private static final Limit LIMIT = Limit.tokenBucket(3, Rate.perMinute(3));
    private static final Duration BUDGET = Duration.ofMillis(200);
    /** The hang guard of a call that must time out: 50 times the budget. How soon it fails is benchmarked. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(10);

    @Test
    void aDecisionTheServiceMadeDegradedCarriesItsCauseToTheCaller() throws Exception {
        // a real Redis client on a port where nothing listens: the service starts and answers by its policy
        int nothing = RedisServer.freePort();
        FailSafeRateLimiter store = FailSafeRateLimiter.builder(
                        () -> RedisRateLimiter.create("redis://127.0.0.1:" + nothing))
                .policy(FailurePolicy.FAIL_OPEN)
                .build();
        SluiceServer.Settings s = SluiceServer.Settings.defaults(store, RuleSet.builtinExample())
                .withGrpc(null)
                .withStore(store, "redis", Duration.ofMillis(100));
        try (SluiceServer server = SluiceServer.start(s)) {
            RemoteRateLimiter remote = RemoteRateLimiter.builder(
                            "http://127.0.0.1:" + server.httpAddress().getPort())
                    .timeBudget(Duration.ofSeconds(5))
                    .build();
            Decision d = remote.tryAcquire("k", LIMIT, 1);
            assertThat(d.allowed()).isTrue();
            assertThat(d.degradation()).isEqualTo(Degradation.UNAVAILABLE);
            assertThat(d.remaining()).as("fail open: a fresh key's numbers").isEqualTo(2);
            assertThat(remote.tryAcquire(List.of(Permit.of("a", LIMIT), Permit.of("b", LIMIT, 2)))
                            .degradation())
                    .isEqualTo(Degradation.UNAVAILABLE);
            assertThat(remote.peek("k", LIMIT, 1).degradation()).isEqualTo(Degradation.UNAVAILABLE);

            // a reset has no policy: the service answers 503 store-unavailable, and the client says so
            RemoteRateLimiterException e =
                    catchThrowableOfType(RemoteRateLimiterException.class, () -> remote.reset("k", LIMIT));
            assertThat(e.httpStatus()).isEqualTo(503);
            assertThat(e.problemType()).isEqualTo("store-unavailable");
            assertThat(e.degradation()).isEqualTo(Degradation.UNAVAILABLE);
            assertThat(e).isInstanceOf(StoreException.class);
        }
    }

    @Test
    void aRefusedConnectionIsUnavailable() throws Exception {
        // a budget no refusal takes: this is about how the failure is classified, not when
        RemoteRateLimiter remote = RemoteRateLimiter.builder("http://127.0.0.1:" + RedisServer.freePort())
                .timeBudget(Duration.ofSeconds(5))
                .build();
        RemoteRateLimiterException e =
                catchThrowableOfType(RemoteRateLimiterException.class, () -> remote.tryAcquire("k", LIMIT, 1));
        assertThat(e.degradation()).isEqualTo(Degradation.UNAVAILABLE);
        assertThat(e.httpStatus()).isZero();
        assertThat(e.problemType()).isNull();
    }

    @Test
    void aServiceThatNeverAnswersIsATimeoutWithinTheBudgetPlusSlack() throws Exception {
        try (Silent silent = new Silent(null)) {
            RemoteRateLimiter remote =
                    RemoteRateLimiter.builder(silent.url()).timeBudget(BUDGET).build();
            assertTimesOut(() -> remote.tryAcquire("k", LIMIT, 1));
            assertTimesOut(() -> {
                try {
                    remote.tryAcquireAsync("k", LIMIT, 1).join();
                } catch (java.util.concurrent.CompletionException e) {
                    throw (RuntimeException) e.getCause(); // the async form fails its future with the same exception
                }
            });
        }
    }

    @Test
    void aServiceThatStallsInTheMiddleOfItsBodyIsATimeoutToo() throws Exception {
        // the JDK client's own request timeout stops at the response headers: the client's bound covers the body
        try (Silent stalls =
                new Silent("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{")) {
            RemoteRateLimiter remote =
                    RemoteRateLimiter.builder(stalls.url()).timeBudget(BUDGET).build();
            assertTimesOut(() -> remote.tryAcquire("k", LIMIT, 1));
        }
    }

    @Test
    void wrappedInAFailSafeLimiterAnUnreachableServiceIsDecidedByThePolicy() throws Exception {
        // a budget no refusal takes: this is about how the failure is classified, not when
        RemoteRateLimiter remote = RemoteRateLimiter.builder("http://127.0.0.1:" + RedisServer.freePort())
                .timeBudget(Duration.ofSeconds(5))
                .build();
        try (FailSafeRateLimiter safe = FailSafeRateLimiter.builder(remote)
                .policy(FailurePolicy.FAIL_CLOSED)
                .build()) {
            Decision d = safe.tryAcquire("k", LIMIT, 1);
            assertThat(d.allowed()).isFalse();
            assertThat(d.degradation()).isEqualTo(Degradation.UNAVAILABLE);
            assertThat(safe.degradedCount(Degradation.UNAVAILABLE)).isEqualTo(1);
        }
    }

    @Test
    void errorAnswersAreClassifiedByStatusAndTheServicesProblemType() throws Exception {
        record Case(int status, String type, Degradation expected) {}
        List<Case> cases = List.of(
                new Case(503, "store-timeout", Degradation.TIMEOUT),
                new Case(503, "store-unavailable", Degradation.UNAVAILABLE),
                new Case(503, "store-overloaded", Degradation.OVERLOADED),
                new Case(503, "store-error", Degradation.STORE_ERROR),
                new Case(503, "store-misconfigured", Degradation.MISCONFIGURED),
                new Case(503, null, Degradation.UNAVAILABLE),
                new Case(502, null, Degradation.UNAVAILABLE),
                new Case(504, null, Degradation.TIMEOUT),
                new Case(500, "internal-error", Degradation.STORE_ERROR),
                new Case(401, "unauthorized", Degradation.MISCONFIGURED),
                new Case(404, "not-found", Degradation.STORE_ERROR));
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        List<String> seen = new ArrayList<>();
        for (Case c : cases) {
            http.createContext("/" + c.status + "-" + c.type + "/v1/check", ex -> {
                byte[] body = (c.type == null
                                ? "{}"
                                : "{\"type\":\"urn:sluice:problem:" + c.type + "\",\"status\":" + c.status
                                        + ",\"detail\":\"as the test says\"}")
                        .getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/problem+json");
                ex.sendResponseHeaders(c.status, body.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(body);
                }
            });
        }
        http.start();
        try {
            for (Case c : cases) {
                RemoteRateLimiter remote = RemoteRateLimiter.builder(
                                "http://127.0.0.1:" + http.getAddress().getPort() + "/" + c.status + "-" + c.type)
                        .timeBudget(Duration.ofSeconds(5))
                        .build();
                RemoteRateLimiterException e =
                        catchThrowableOfType(RemoteRateLimiterException.class, () -> remote.tryAcquire("k", LIMIT, 1));
                seen.add(c.status + " " + c.type + " -> " + e.degradation() + " (" + e.httpStatus() + ", "
                        + e.problemType() + ")");
            }
        } finally {
            http.stop(0);
        }
        List<String> expected = cases.stream()
                .map(c -> c.status + " " + c.type + " -> " + c.expected + " (" + c.status + ", " + c.type + ")")
                .toList();
        assertThat(seen).isEqualTo(expected);
    }

    /** The call fails with a timeout rather than hanging; how close to its budget is benchmarked, not tested. */
    private static void assertTimesOut(Runnable call) {
        RemoteRateLimiterException e = assertTimeoutPreemptively(
                HANG_GUARD,
                () -> catchThrowableOfType(RemoteRateLimiterException.class, call::run),
                "a call that never returns");
        assertThat(e).as("a timeout").isNotNull();
        assertThat(e.degradation()).as(e.getMessage()).isEqualTo(Degradation.TIMEOUT);
    }

    /** Accepts connections, reads nothing, and writes {@code prefix} (or nothing) then stays silent. */
    private static final class Silent implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final List<Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final Thread acceptor;

        Silent(String prefix) throws IOException {
            acceptor = new Thread(
                    () -> {
                        while (!server.isClosed()) {
                            try {
                                Socket s = server.accept();
                                accepted.add(s);
                                if (prefix != null) {
                                    s.getOutputStream().write(prefix.getBytes(StandardCharsets.US_ASCII));
                                    s.getOutputStream().flush();
                                }
                            } catch (IOException e) {
                                return; // closed
                            }
                        }
                    },
                    "silent-acceptor");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
