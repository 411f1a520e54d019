package dev.sluice.server.client;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.client.RemoteRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import dev.sluice.tck.ForwardingRateLimiter;
import dev.sluice.tck.RateLimiterTck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;

/**
 * The whole conformance suite, run against {@link RemoteRateLimiter} talking HTTP to a real {@code sluice serve}
 * (one per limiter the suite asks for) whose in-memory store runs on the suite's clock. Every decision crosses
 * the socket, the JSON and the rules layer; the suite requires them to be the in-process store's, exactly. With
 * {@link SettleTck}: reservations ({@code POST /v1/check} with a {@code reservation}) and settles ({@code POST
 * /v1/settle}) too; with {@link InFlightTck}: work in flight ({@code POST /v1/in-flight/acquire}, {@code release},
 * {@code renew}) on the service's store.
 */
class RemoteConformanceTest implements RateLimiterTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        InMemoryRateLimiter store = InMemoryRateLimiter.builder().ticker(ticker).build();
        SluiceServer.Settings s =
                SluiceServer.Settings.defaults(store, RuleSet.builtinExample()).withGrpc(null);
        SluiceServer server;
        try {
            server = SluiceServer.start(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        RemoteRateLimiter remote = RemoteRateLimiter.builder(
                        "http://127.0.0.1:" + server.httpAddress().getPort())
                .timeBudget(Duration.ofSeconds(20))
                .build();
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
    private static final class ClosingServer extends ForwardingRateLimiter {
        private final SluiceServer server;

        ClosingServer(RemoteRateLimiter remote, SluiceServer server) {
            super(remote);
            this.server = server;
        }

        @Override
        public void close() {
            delegate.close();
            server.close();
        }
    }
}
