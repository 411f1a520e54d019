package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.servlet.RateLimitListener.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@link RateLimited} without a server: what fails at startup and how it reads, bad costs at run time, the off
 * switch and shadow mode, and the async path when the store answers later (a limiter whose futures the test
 * completes from a thread of its own, as a remote store completes them on its I/O thread).
 */
class RateLimitedMethodsTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withPropertyValues(
                    "sluice.limits.exports.requests_per_unit=2",
                    "sluice.limits.exports.unit=hour",
                    "sluice.limits.exports.algorithm=token_bucket");

    static class UnknownLimit {
        @RateLimited(limit = "gold")
        public void call() {}
    }

    static class KeyDoesNotParse {
        @RateLimited(limit = "exports", key = "#user.")
        public void call(String user) {}
    }

    static class UnknownParameter {
        @RateLimited(limit = "exports", key = "#usr.id", cost = "#items.size()")
        public void call(String user, List<String> items) {}
    }

    static class CostOverCapacity {
        @RateLimited(limit = "exports", cost = "3")
        public void call() {}
    }

    static class PrivateMethod {
        @RateLimited(limit = "exports")
        private void call() {}

        void callPrivate() {
            call();
        }
    }

    static class Service {
        private final AtomicReference<String> ranOn = new AtomicReference<>();

        @RateLimited(limit = "exports", key = "#user", cost = "#cost")
        public String spend(String user, Object cost) {
            return "spent " + cost;
        }

        @RateLimited(limit = "exports", key = "#p0")
        public CompletableFuture<String> report(String user) {
            ranOn.set(Thread.currentThread().getName());
            return CompletableFuture.completedFuture("report for " + user);
        }

        public String ranOn() {
            return ranOn.get();
        }
    }

    private SluiceConfigException startupFailure(Class<?> bean) {
        AtomicReference<SluiceConfigException> failure = new AtomicReference<>();
        runner.withBean(bean).run(ctx -> {
            assertThat(ctx).hasFailed();
            Throwable t = ctx.getStartupFailure();
            while (t != null && !(t instanceof SluiceConfigException)) {
                t = t.getCause();
            }
            assertThat(t)
                    .as("a SluiceConfigException in " + ctx.getStartupFailure())
                    .isNotNull();
            failure.set((SluiceConfigException) t);
        });
        return failure.get();
    }

    @Test
    void unknownLimitNameFailsStartupNamingTheMethodAndTheFix() {
        SluiceConfigException e = startupFailure(UnknownLimit.class);
        assertThat(e)
                .hasMessage("@RateLimited(limit = \"gold\") on UnknownLimit.call(): unknown limit 'gold': define"
                        + " it under sluice.limits.gold or use one of [exports]");
        FailureAnalysis a = new SluiceConfigFailureAnalyzer().analyze(new IllegalStateException("wrapped", e));
        assertThat(a.getDescription()).isEqualTo("Sluice rate limiting is misconfigured: " + e.getMessage());
        assertThat(a.getAction())
                .isEqualTo("Fix @RateLimited(limit = \"gold\") on UnknownLimit.call(), or the"
                        + " limits under sluice.limits in your application.yml or application.properties.");
    }

    @Test
    void expressionThatDoesNotParseFailsStartupNamingTheAttribute() {
        assertThat(startupFailure(KeyDoesNotParse.class).getMessage())
                .startsWith("@RateLimited(key = \"#user.\") on KeyDoesNotParse.call(String): the key expression does"
                        + " not parse (")
                .endsWith("): write SpEL over the arguments, such as #user.id, #p0 or #a0");
    }

    @Test
    void expressionNamingNoParameterFailsStartupListingThem() {
        assertThat(startupFailure(UnknownParameter.class))
                .hasMessage("@RateLimited(key = \"#usr.id\") on"
                        + " UnknownParameter.call(String, List): #usr is not a parameter of UnknownParameter.call(String,"
                        + " List): use #user or #items, or #p0 to #p1 by position");
    }

    @Test
    void literalCostOverTheCapacityFailsStartup() {
        assertThat(startupFailure(CostOverCapacity.class))
                .hasMessage("@RateLimited(cost = \"3\") on"
                        + " CostOverCapacity.call(): cost 3 exceeds capacity 2 of limit 'exports': it can never be granted;"
                        + " lower the cost or raise sluice.limits.exports");
    }

    @Test
    void privateMethodFailsStartupRatherThanGoingUnlimited() {
        assertThat(startupFailure(PrivateMethod.class))
                .hasMessage("@RateLimited on PrivateMethod.call(): a private"
                        + " method cannot be intercepted, so it would never be limited: make it public (or protected),"
                        + " non-static and non-final, and call it through the bean");
    }

    @Test
    void costMustBeAWholeNumberOfPermitsNamingTheMethodAndTheValue() {
        runner.withBean(Service.class).run(ctx -> {
            Service s = ctx.getBean(Service.class);
            assertThat(s.spend("ann", 2L)).isEqualTo("spent 2");
            assertThat(s.spend("bob", 2.0)).as("a whole double is whole").isEqualTo("spent 2.0");
            String prefix = "@RateLimited cost of Service.spend(String, Object): '#cost' gave ";
            assertThatThrownBy(() -> s.spend("cid", -1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(prefix + "-1; a cost must be a whole number of permits, 0 or more");
            assertThatThrownBy(() -> s.spend("cid", 1.5))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(prefix + "1.5; a cost must be a whole number of permits, 0 or more");
            assertThatThrownBy(() -> s.spend("cid", "2"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(prefix + "\"2\" (a String); a cost must be a whole number of permits, 0 or more");
            assertThatThrownBy(() -> s.spend("cid", null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(prefix + "null; a cost must be a whole number of permits, 0 or more");
            assertThatThrownBy(() -> s.spend(null, 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("@RateLimited key of Service.spend(String, Object): '#user' gave null; every call"
                            + " needs a key (use #user?.id ?: 'anonymous' to give one)");
            RateLimitedMethod spend = ctx.getBean(RateLimitedMethods.class).methods().stream()
                    .filter(x -> x.description.equals("Service.spend(String, Object)"))
                    .findFirst()
                    .orElseThrow();
            assertThat(spend.counts.count(Outcome.BAD_COST)).isEqualTo(4);
            CompletableFuture<String> f = s.report(null);
            assertThat(f).as("a future-returning method fails its future").isCompletedExceptionally();
            assertThatThrownBy(f::join).cause().isInstanceOf(IllegalArgumentException.class);
        });
    }

    @Test
    void offSwitchLeavesMethodsUnlimited() {
        runner.withBean(Service.class)
                .withPropertyValues("sluice.enabled=false")
                .run(ctx -> {
                    Service s = ctx.getBean(Service.class);
                    assertThat(AopUtils.isAopProxy(s)).isFalse();
                    for (int i = 0; i < 5; i++) {
                        assertThat(s.spend("ann", 1)).isEqualTo("spent 1");
                    }
                });
    }

    @Test
    void shadowModeRunsWouldBeDenialsAndCountsThem() {
        runner.withBean(Service.class)
                .withPropertyValues("sluice.shadow-mode=true")
                .run(ctx -> {
                    Service s = ctx.getBean(Service.class);
                    for (int i = 0; i < 5; i++) {
                        assertThat(s.spend("ann", 1)).isEqualTo("spent 1");
                    }
                    RateLimitedMethod m = ctx.getBean(RateLimitedMethods.class).methods().stream()
                            .filter(x -> x.description.equals("Service.spend(String, Object)"))
                            .findFirst()
                            .orElseThrow();
                    assertThat(m.counts.count(Outcome.ALLOWED)).isEqualTo(2);
                    assertThat(m.counts.count(Outcome.SHADOW_DENIED)).isEqualTo(3);
                });
    }

    /** A store that answers later: the test completes each decision from a thread of its own. */
    static final class LaterStore implements RateLimiter {
        final AtomicReference<CompletableFuture<Decision>> pending = new AtomicReference<>();

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            CompletableFuture<Decision> f = new CompletableFuture<>();
            pending.set(f);
            return f;
        }

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            throw new IllegalStateException("store is down");
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void reset(String key, Limit limit) {}

        @Override
        public void close() {}

        /** Completes the pending decision on a thread named {@code store-io}, as a remote store's I/O thread. */
        void answer(Decision d) throws InterruptedException {
            Thread t = new Thread(() -> pending.get().complete(d), "store-io");
            t.start();
            t.join();
        }
    }

    @Test
    void aFutureIsReturnedBeforeTheStoreAnswersAndTheMethodRunsOnTheTaskExecutor() {
        LaterStore store = new LaterStore();
        ExecutorService tasks = Executors.newSingleThreadExecutor(r -> new Thread(r, "app-task"));
        try {
            runner.withBean(Service.class)
                    .withBean(RateLimiter.class, () -> store)
                    .withBean(RateLimitedInterceptor.TASK_EXECUTOR, ExecutorService.class, () -> tasks)
                    .run(ctx -> {
                        Service s = ctx.getBean(Service.class);
                        CompletableFuture<String> allowed = s.report("ann");
                        assertThat(allowed)
                                .as("returned while the store has not answered")
                                .isNotDone();
                        assertThat(s.ranOn()).as("nothing ran yet").isNull();
                        store.answer(new Decision(true, 2, 1, 0, 1_800_000_000_000L));
                        assertThat(allowed.get(5, TimeUnit.SECONDS)).isEqualTo("report for ann");
                        assertThat(s.ranOn()).as("not the store's I/O thread").isEqualTo("app-task");

                        CompletableFuture<String> denied = s.report("ann");
                        store.answer(new Decision(false, 2, 0, Duration.ofMinutes(30), Duration.ofHours(1)));
                        assertThatThrownBy(() -> denied.get(5, TimeUnit.SECONDS))
                                .cause()
                                .isInstanceOf(RateLimitExceededException.class)
                                .hasMessage(
                                        "Rate limit 'exports' exceeded by Service.report(String): retry in 1800 s.");
                        assertThat(s.ranOn()).isEqualTo("app-task");

                        CompletableFuture<String> failed = s.report("bob");
                        Thread io = new Thread(
                                () -> store.pending
                                        .get()
                                        .completeExceptionally(new IllegalStateException("connection reset")),
                                "store-io");
                        io.start();
                        io.join();
                        assertThat(failed.get(5, TimeUnit.SECONDS))
                                .as("a failing limiter lets the call run")
                                .isEqualTo("report for bob");
                        assertThat(s.spend("bob", 1)).as("the sync path too").isEqualTo("spent 1");
                    });
        } finally {
            tasks.shutdownNow();
        }
    }
}
