package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ManualTicker;
import dev.sluice.spring.methodapp.ExportsApp.ExportService;
import dev.sluice.spring.methodapp.ExportsApp.User;
import dev.sluice.spring.methodapp.ExportsAppTest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import reactor.core.publisher.Mono;

/**
 * {@link RateLimited} service methods in a real Spring Boot application, over real HTTP: allowed calls run, a call
 * over the limit is answered 429 with the filter's headers and body, keys come from the arguments, costs spend
 * several permits, and futures and Monos fail without running the method. One context for every test: each test
 * uses its own users. Time is the application's {@link ManualTicker}; nothing sleeps.
 */
@ExportsAppTest
class RateLimitedHttpTest {
    @LocalServerPort
    int port;

    @Autowired
    ExportService exports;

    @Autowired
    ManualTicker ticker;

    private HttpResponse<String> export(String user, int items) {
        return Http.get(port, "/api/exports?user=" + user + "&items=" + items);
    }

    @Test
    void allowedCallsRunThenTheCallOverTheLimitIsAnswered429WithHeadersAndProblemBody() {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = export("ann", 1);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("exported 1 for ann");
        }
        int bodies = exports.bodies();
        HttpResponse<String> denied = export("ann", 1);
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(exports.bodies()).as("the method did not run").isEqualTo(bodies);
        assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        // 5 an hour: one permit comes back every 12 minutes; the bucket is full again in an hour
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("720");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"exports\";q=5;w=3600");
        assertThat(denied.headers().allValues("RateLimit"))
                .as("the denying limit's, not also the filter's")
                .containsExactly("\"exports\";r=0;t=3600");
        assertThat(denied.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit 'exports' exceeded: retry in 720 s.\",\"instance\":\"/api/exports\","
                        + "\"limit\":\"exports\",\"retryAfterSeconds\":720}");

        ticker.advance(Duration.ofMinutes(12));
        assertThat(export("ann", 1).statusCode()).isEqualTo(200);
    }

    @Test
    void theKeyExpressionGivesEachUserABudget() {
        assertThat(export("bea", 5).statusCode()).isEqualTo(200);
        assertThat(export("bea", 1).statusCode()).isEqualTo(429);
        assertThat(export("cid", 5).statusCode())
                .as("another user, another budget")
                .isEqualTo(200);
    }

    @Test
    void theCostExpressionSpendsOnePermitPerItemAndADeniedCallSpendsNothing() {
        assertThat(export("dan", 3).statusCode()).isEqualTo(200);
        HttpResponse<String> denied = export("dan", 3);
        assertThat(denied.statusCode()).as("3 more do not fit in the 2 left").isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit").orElseThrow()).isEqualTo("\"exports\";r=2;t=2160");
        assertThat(export("dan", 2).statusCode())
                .as("the denial took nothing: 2 still fit")
                .isEqualTo(200);
        assertThat(export("dan", 1).statusCode()).isEqualTo(429);
    }

    @Test
    void aCostOfNothingRunsWithoutAsking() {
        for (int i = 0; i < 3; i++) {
            assertThat(exports.export(new User("eve"), List.of())).isEqualTo("exported 0 for eve");
        }
        assertThat(exports.export(new User("eve"), List.of("a", "b", "c", "d", "e")))
                .isEqualTo("exported 5 for eve");
    }

    @Test
    void aCostOverTheCapacityIsABadArgumentNamingTheMethod() {
        assertThatThrownBy(() -> exports.export(new User("fay"), List.of("1", "2", "3", "4", "5", "6")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("@RateLimited cost of ExportService.export(User, List): '#items.size()' gave 6, which"
                        + " exceeds capacity 5 of limit 'exports': it can never be granted; lower the cost or raise"
                        + " sluice.limits.exports");
    }

    @Test
    void aDeniedFutureFailsWithoutRunningTheMethod() {
        CompletableFuture<String> first = exports.report("gus");
        assertThat(first.join()).isEqualTo("report for gus");
        int bodies = exports.bodies();
        CompletableFuture<String> second = exports.report("gus");
        assertThat(second).isCompletedExceptionally();
        assertThat(exports.bodies()).as("the method did not run").isEqualTo(bodies);
        assertThatThrownBy(second::join)
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                    assertThat(e.limitName()).isEqualTo("reports");
                    assertThat(e.key()).isEqualTo("gus");
                    assertThat(e.retryAfter()).isEqualTo(Duration.ofMinutes(1));
                    assertThat(e.decision().allowed()).isFalse();
                    assertThat(e)
                            .hasMessage("Rate limit 'reports' exceeded by ExportService.report(String): retry"
                                    + " in 60 s.");
                });
    }

    @Test
    void aDeniedFutureFromAControllerIsAnswered429() {
        assertThat(Http.get(port, "/api/reports/hal").body()).isEqualTo("report for hal");
        HttpResponse<String> denied = Http.get(port, "/api/reports/hal");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"reports\";q=1;w=60");
    }

    @Test
    void aMonoIsDecidedWhenSubscribedAndFailsWithoutRunningTheMethod() {
        Mono<String> first = exports.reportMono("ida");
        Mono<String> second = exports.reportMono("ida");
        int bodies = exports.bodies();
        assertThat(first.block()).isEqualTo("mono report for ida");
        assertThatThrownBy(second::block)
                .isInstanceOf(RateLimitExceededException.class)
                .hasMessageStartingWith("Rate limit 'reports' exceeded by ExportService.reportMono(String)");
        assertThat(exports.bodies())
                .as("one body ran, at the first subscription")
                .isEqualTo(bodies + 1);
        // its own scope: the future-returning report under the same limit is another budget
        assertThat(exports.report("ida").join()).isEqualTo("report for ida");
        ticker.advance(Duration.ofMinutes(1));
        assertThat(second.block()).as("a later subscription is a new call").isEqualTo("mono report for ida");
    }
}
