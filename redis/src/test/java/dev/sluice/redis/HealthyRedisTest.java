package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.failsafe.FailSafeRateLimiter;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A healthy Redis with every default: {@code create()} connects, loads the scripts and makes one round trip, so the
 * first call succeeds; eight threads on one hot key with a {@code MONITOR} client attached (which slows Redis down)
 * never fail and are never degraded. Counted, not timed: zero errors, exactly the limit's admissions.
 */
class HealthyRedisTest {

    @Test
    void theFirstCallAfterCreateSucceeds() {
        try (RedisServer server = RedisServer.start();
                RedisRateLimiter rl = RedisRateLimiter.create(server.uri())) {
            Limit limit = Limit.tokenBucket(2, Rate.perHour(2));
            assertThat(rl.tryAcquire("first", limit).remaining()).isEqualTo(1);
            assertThat(rl.tryAcquire("first", limit).allowed()).isTrue();
            assertThat(rl.tryAcquire("first", limit).allowed()).isFalse();
        }
    }

    @Test
    @SuppressWarnings("try") // the MONITOR client only has to be attached while the threads run
    void eightThreadsOnAHotKeyWithMonitorAttachedNeverFail() throws Exception {
        int threads = 8;
        int calls = 500;
        Limit limit = Limit.tokenBucket(2_500, Rate.perHour(1));
        String key = "hot:" + UUID.randomUUID();
        try (RedisServer server = RedisServer.start();
                Socket monitor = monitor(server.uri());
                FailSafeRateLimiter rl = FailSafeRateLimiter.builder(() -> RedisRateLimiter.create(server.uri()))
                        .build()) {
            assertThat(rl.storeHealthy()).isTrue();
            AtomicLong errors = new AtomicLong();
            AtomicLong admitted = new AtomicLong();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    try {
                        go.await();
                        for (int i = 0; i < calls; i++) {
                            if (rl.tryAcquire(key, limit).allowed()) {
                                admitted.incrementAndGet();
                            }
                        }
                    } catch (InterruptedException | RuntimeException e) {
                        errors.incrementAndGet();
                    }
                });
                th.start();
                callers.add(th);
            }
            go.countDown();
            for (Thread th : callers) {
                th.join(120_000); // a hang guard only
            }
            assertThat(errors.get()).as("errors").isZero();
            for (Degradation cause : Degradation.values()) {
                assertThat(rl.degradedCount(cause))
                        .as("decisions degraded for %s", cause)
                        .isZero();
            }
            assertThat(admitted.get())
                    .as("the hot key admits exactly its capacity of 2,500 of 4,000 calls")
                    .isEqualTo(2_500);
        }
    }

    /** A raw {@code MONITOR} client: Redis echoes every command to it; a thread drains the echo. */
    private static Socket monitor(String uri) throws Exception {
        URI u = URI.create(uri);
        Socket s = new Socket(u.getHost(), u.getPort());
        s.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        byte[] ok = new byte[5];
        assertThat(in.readNBytes(ok, 0, 5)).isEqualTo(5);
        assertThat(new String(ok, StandardCharsets.US_ASCII)).isEqualTo("+OK\r\n");
        Thread drain = new Thread(
                () -> {
                    byte[] buf = new byte[64 * 1024];
                    try {
                        while (in.read(buf) >= 0) {
                            // discard
                        }
                    } catch (java.io.IOException e) {
                        // closed
                    }
                },
                "monitor-drain");
        drain.setDaemon(true);
        drain.start();
        return s;
    }
}
