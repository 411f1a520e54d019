package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Limit;
import dev.sluice.Rate;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** No message and no toString ever shows the password of the Redis URI, whatever characters it has. */
class RedisPasswordTest {

    /** '@', '/' and ':' inside: the old redaction ("//[^@/]*@") let such a password through. */
    private static final String PASSWORD = "s3cr@t/pw:x";

    private static final String ENCODED = "s3cr%40t%2Fpw%3Ax";

    @Test
    void aLimiterWithAPasswordNeverShowsIt() {
        try (RedisServer server = RedisServer.start("--requirepass", PASSWORD);
                RedisRateLimiter rl = RedisRateLimiter.builder("redis://:" + ENCODED + "@127.0.0.1:" + server.port)
                        .timeBudget(Duration.ofSeconds(2))
                        .build()) {
            assertThat(rl.tryAcquire("k", Limit.tokenBucket(2, Rate.perSecond(1)))
                            .allowed())
                    .isTrue();
            assertThat(rl.toString()).isEqualTo("RedisRateLimiter[redis://127.0.0.1:" + server.port + "]");
            server.stop();
            Throwable down = catchThrowable(() -> rl.tryAcquire("k", Limit.tokenBucket(2, Rate.perSecond(1))));
            assertThat(down).isInstanceOf(RedisStoreException.class);
            assertNoSecret(down);
        }
    }

    @Test
    void aRedisThatIsDownDoesNotShowThePassword() throws Exception {
        int port = RedisServer.freePort();
        for (String uri : new String[] {
            "redis://:" + PASSWORD + "@127.0.0.1:" + port,
            "redis://:" + ENCODED + "@127.0.0.1:" + port,
            "redis://user:" + ENCODED + "@127.0.0.1:" + port
        }) {
            for (Boolean cluster : new Boolean[] {null, false}) {
                RedisRateLimiter.Builder b = RedisRateLimiter.builder(uri).timeBudget(Duration.ofMillis(300));
                if (cluster != null) {
                    b.cluster(cluster);
                }
                Throwable e = catchThrowable(b::build);
                assertThat(e).as(uri).isNotNull();
                assertNoSecret(e);
                if (e instanceof RedisStoreException) {
                    assertThat(e).hasMessageContaining("redis://127.0.0.1:" + port);
                }
            }
        }
    }

    @Test
    void aBadUriDoesNotShowThePassword() {
        for (String uri :
                new String[] {":" + PASSWORD + "@host", "redis://:" + PASSWORD + "@", "redis://:" + ENCODED + "@,"}) {
            Throwable e = catchThrowable(
                    () -> RedisRateLimiter.builder(uri).cluster(false).build());
            assertThat(e).as(uri).isInstanceOf(IllegalArgumentException.class);
            assertNoSecret(e);
        }
        // Lettuce takes these as odd hosts (or rejects them): either way, no password in what is said
        for (String uri : new String[] {
            "redis://:" + PASSWORD + "@127.0.0.1:notaport",
            "redis://:" + ENCODED + "@127.0.0.1:notaport",
            "redis://:" + PASSWORD + "@[::1",
            "redis://:" + PASSWORD + "@127.0.0.1:1?timeout=x"
        }) {
            Throwable e = catchThrowable(() -> RedisRateLimiter.builder(uri)
                    .cluster(false)
                    .timeBudget(Duration.ofMillis(300))
                    .build());
            assertThat(e).as(uri).isNotNull();
            assertNoSecret(e);
        }
    }

    /** Neither the message nor any cause's, nor the password's fragments. */
    private static void assertNoSecret(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage()) + " " + t;
            for (String part : new String[] {"s3cr", "t/pw", "pw:x", "%40t", "%2Fpw"}) {
                assertThat(m).as("message of " + t.getClass().getName()).doesNotContain(part);
            }
            if (t.getCause() == t) {
                break;
            }
        }
    }
}
