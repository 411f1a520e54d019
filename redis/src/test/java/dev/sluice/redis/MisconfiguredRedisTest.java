package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.tck.Eventually;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.event.connection.ReconnectFailedEvent;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A misconfiguration is not an outage: a Redis that refuses this client's password or privileges, a host that does
 * not resolve, a port that speaks another protocol or the other side of TLS, fail {@code create()} at once as
 * {@link Degradation#MISCONFIGURED}, with one message that names the URI (never its password), what was refused and
 * the fix; a Redis that is down or never answers stays an outage. After a good start, a rotated password makes
 * decisions degraded {@code MISCONFIGURED}, and Lettuce's reconnections back off instead of logging in every 100 ms.
 */
class MisconfiguredRedisTest {

    private static final Limit LIMIT = Limit.tokenBucket(10, Rate.perSecond(1));
    private static final String PASSWORD = "s3cret-one";

    private static RedisStoreException refused(String uri) {
        Throwable e = catchThrowable(() -> RedisRateLimiter.builder(uri)
                .connectTimeout(Duration.ofSeconds(5))
                .timeBudget(Duration.ofSeconds(2))
                .build());
        assertThat(e).as(uri).isInstanceOf(RedisStoreException.class);
        return (RedisStoreException) e;
    }

    @Test
    void aWrongOrMissingPasswordIsAMisconfigurationThatNamesTheFixAndNeverThePassword() {
        try (RedisServer server = RedisServer.start("--requirepass", PASSWORD)) {
            RedisStoreException wrong = refused("redis://:not-" + PASSWORD + "@127.0.0.1:" + server.port());
            assertThat(wrong.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(wrong)
                    .hasMessageStartingWith("Redis at redis://127.0.0.1:" + server.port()
                            + " refused the user name or password (WRONGPASS")
                    .hasMessageContaining("fix the user name and password in the URI")
                    .hasMessageNotContaining(PASSWORD);
            RedisStoreException none = refused(server.uri());
            assertThat(none.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(none).hasMessageContaining("requires a password, and the URI gives none (NOAUTH");
        }
    }

    @Test
    void anAclUserWithoutTheScriptingCommandsIsAMisconfiguration() {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.command(null, "ACL SETUSER limited on >" + PASSWORD + " ~* +@all -@scripting"))
                    .startsWith("+OK");
            RedisStoreException e = refused("redis://limited:" + PASSWORD + "@127.0.0.1:" + server.port());
            assertThat(e.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(e)
                    .hasMessageContaining("NOPERM")
                    .hasMessageContaining("ACL SETUSER")
                    .hasMessageNotContaining(PASSWORD);
        }
    }

    @Test
    void aHostThatDoesNotResolveIsAMisconfiguration() {
        RedisStoreException e = refused("redis://no-such-host.invalid:6379");
        assertThat(e.degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(e).hasMessageContaining("redis://no-such-host.invalid:6379 names a host that does not resolve");
    }

    @Test
    void anHttpServerAtThePortIsAMisconfiguration() throws Exception {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/", x -> {
            x.sendResponseHeaders(404, -1);
            x.close();
        });
        http.start();
        try {
            RedisStoreException e =
                    refused("redis://127.0.0.1:" + http.getAddress().getPort());
            assertThat(e.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(e).hasMessageContaining("answered in another protocol than Redis's");
        } finally {
            http.stop(0);
        }
    }

    @Test
    void tlsOnOneSideOnlyIsAMisconfigurationEitherWay() throws Exception {
        Path dir = Files.createTempDirectory("sluice-redis-tls");
        TlsFiles tls = TlsFiles.in(dir);
        int tlsPort;
        RedisServer server;
        for (int attempt = 1; ; attempt++) { // on other ports when another process took one first
            tlsPort = RedisServer.freePort();
            server = RedisServer.onFreePort(
                    "--tls-port",
                    Integer.toString(tlsPort),
                    "--tls-cert-file",
                    tls.cert.toString(),
                    "--tls-key-file",
                    tls.key.toString(),
                    "--tls-ca-cert-file",
                    tls.cert.toString(),
                    "--tls-auth-clients",
                    "no");
            try {
                server.startProcess();
                break;
            } catch (RedisServer.PortTaken e) {
                server.close();
                if (attempt == 5) {
                    throw e;
                }
            } catch (IllegalStateException e) {
                server.close();
                Assumptions.abort("this redis-server was built without TLS: " + e.getMessage());
            }
        }
        try (RedisServer started = server) {
            RedisStoreException plainToTls = refused("redis://127.0.0.1:" + tlsPort);
            assertThat(plainToTls.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(plainToTls).hasMessage("redis://127.0.0.1:" + tlsPort + " speaks only TLS: use rediss://");
            RedisStoreException tlsToPlain = refused("rediss://127.0.0.1:" + started.port());
            assertThat(tlsToPlain.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(tlsToPlain)
                    .hasMessage("rediss://127.0.0.1:" + started.port()
                            + " answers in plain text, not TLS: use redis:// (or enable TLS on the server)");
            RedisStoreException untrusted = refused("rediss://127.0.0.1:" + tlsPort);
            assertThat(untrusted.degradation())
                    .as("a self-signed certificate nobody trusts")
                    .isEqualTo(Degradation.MISCONFIGURED);
            assertThat(untrusted).hasMessageContaining("failed the TLS handshake");
        }
    }

    @Test
    void aRedisThatIsDownOrNeverAnswersIsAnOutageNotAMisconfiguration() throws Exception {
        RedisStoreException down = refused("redis://127.0.0.1:" + RedisServer.freePort());
        assertThat(down.degradation()).isEqualTo(Degradation.UNAVAILABLE);
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Throwable e = catchThrowable(() -> RedisRateLimiter.builder("redis://127.0.0.1:" + silent.getLocalPort())
                    .connectTimeout(Duration.ofMillis(300))
                    .build());
            assertThat(e).isInstanceOf(RedisStoreException.class);
            assertThat(((RedisStoreException) e).degradation())
                    .as(e.getMessage())
                    .isIn(Degradation.UNAVAILABLE, Degradation.TIMEOUT);
        }
    }

    @Test
    void aFailSafeLimiterRefusesToStartOnAMisconfiguredRedisWithItsMessage() {
        try (RedisServer server = RedisServer.start("--requirepass", PASSWORD)) {
            Throwable e = catchThrowable(() -> {
                try (FailSafeRateLimiter started = FailSafeRateLimiter.builder(
                                () -> RedisRateLimiter.create(server.uri()))
                        .build()) {
                    throw new AssertionError("build() returned; its first decision: " + started.tryAcquire("k", LIMIT));
                }
            });
            assertThat(e).isInstanceOf(RedisStoreException.class).hasMessageContaining("NOAUTH");
            assertThat(((RedisStoreException) e).degradation()).isEqualTo(Degradation.MISCONFIGURED);
        }
    }

    /**
     * The password is changed under a running limiter and its connection dropped: its decisions are degraded
     * MISCONFIGURED (with what Redis refused), and over six seconds Redis sees a handful of logins, not the sixty a
     * 100 ms reconnection delay would make. Once the password is back, Redis decides again.
     */
    @Test
    void aRotatedPasswordDegradesDecisionsAsMisconfiguredAndReconnectionsBackOff() throws Exception {
        try (RedisServer server = RedisServer.start();
                FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(() -> RedisRateLimiter.builder(server.uri())
                                .timeBudget(Duration.ofSeconds(2))
                                .build())
                        .policy(FailurePolicy.FAIL_CLOSED)
                        .build()) {
            assertThat(limiter.tryAcquire("k", LIMIT).degraded()).isFalse();
            assertThat(server.command(null, "CONFIG SET requirepass " + PASSWORD, "CLIENT KILL TYPE normal SKIPME yes"))
                    .startsWith("+OK");
            long before = server.connectionsReceived(PASSWORD);
            // the first reconnection is refused within milliseconds
            java.util.concurrent.atomic.AtomicReference<Decision> d =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Eventually.await(Duration.ofSeconds(10), "a decision degraded as misconfigured", () -> {
                d.set(limiter.tryAcquire("k", LIMIT));
                return d.get().degradation() == Degradation.MISCONFIGURED;
            });
            assertThat(d.get().allowed()).as("fail closed").isFalse();
            Thread.sleep(6000); // the window in which logins are counted: no assertion on time
            long logins = server.connectionsReceived(PASSWORD) - before - 1; // minus the question itself
            assertThat(logins)
                    .as("login attempts in 6 s (at 100 ms between attempts: about 60)")
                    .isBetween(1L, 6L);

            assertThat(server.command(PASSWORD, "CONFIG SET requirepass \"\"")).contains("+OK");
            // the next reconnection comes at most 30 s after the last (ReconnectBackoff.MAX)
            Eventually.await(
                    Duration.ofSeconds(60),
                    "Redis deciding again once the password is back",
                    () -> !limiter.tryAcquire("k", LIMIT).degraded());
        }
    }

    @Test
    void refusedReconnectionsBackOffFromOneToThirtySecondsAndAnOutageDoesNot() {
        ReconnectWatch watch = new ReconnectWatch();
        assertThat(watch.createDelay(1)).isEqualTo(Duration.ofMillis(1));
        assertThat(watch.createDelay(10))
                .as("an outage: at most 100 ms")
                .isEqualTo(RedisConnection.MAX_RECONNECT_DELAY);
        ReconnectFailedEvent wrongPass = failed(new RedisCommandExecutionException(
                "WRONGPASS invalid username-password" + " pair or user is disabled."));
        long[] seconds = {1, 2, 4, 8, 16, 30, 30};
        for (int i = 0; i < seconds.length; i++) {
            watch.seen(wrongPass);
            assertThat(watch.createDelay(i + 2)).isEqualTo(Duration.ofSeconds(seconds[i]));
        }
        assertThat(watch.refusal()).contains("WRONGPASS");
        watch.seen(failed(new RedisConnectionException("Connection refused")));
        assertThat(watch.refusal()).as("restarting: an outage again").isNull();
        assertThat(watch.createDelay(1)).isEqualTo(Duration.ofMillis(1));
    }

    private static ReconnectFailedEvent failed(Throwable cause) {
        return new ReconnectFailedEvent(new InetSocketAddress(0), new InetSocketAddress(0), cause, 1);
    }
}
