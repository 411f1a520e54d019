package dev.sluice.server.client;

import dev.sluice.Decision;
import dev.sluice.client.RemoteRateLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import dev.sluice.tck.RateLimiterTck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The whole conformance suite, run against {@link RemoteRateLimiter} talking HTTP to a real {@code sluice serve}
 * (one per limiter the suite asks for) whose in-memory store runs on the suite's clock. Every decision crosses
 * the socket, the JSON and the rules layer; the suite requires them to be the in-process store's, exactly.
 */
class RemoteConformanceTest implements RateLimiterTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        InMemoryRateLimiter store = InMemoryRateLimiter.builder().ticker(ticker).build();
        SluiceServer.Settings s = SluiceServer.Settings.defaults(store, RuleSet.builtinExample()).withGrpc(null);
        SluiceServer server;
        try {
            server = SluiceServer.start(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        RemoteRateLimiter remote = RemoteRateLimiter.builder("http://127.0.0.1:" + server.httpAddress().getPort())
                .timeBudget(Duration.ofSeconds(20)).build();
        return new ClosingServer(remote, server);
    }

    @Override
    public int concurrencyRounds() {
        return 5;
    }

    @Override
    public int differentialSteps() {
        return 200;
    }

    /** The remote limiter, closing its private server with it. */
    private record ClosingServer(RemoteRateLimiter remote, SluiceServer server) implements RateLimiter {
        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            return remote.tryAcquire(key, limit, cost);
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return remote.tryAcquireAsync(key, limit, cost);
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            return remote.tryAcquire(permits);
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            return remote.reserve(key, limit, cost, maxWait);
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            return remote.peek(key, limit, cost);
        }

        @Override
        public void reset(String key, Limit limit) {
            remote.reset(key, limit);
        }

        @Override
        public void close() {
            remote.close();
            server.close();
        }
    }
}
