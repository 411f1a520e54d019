package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.redis.RedisServer;
import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.servlet.RateLimitListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** Wiring without a server: what backs off, what fails at startup and how the failure reads. */
class SluiceAutoConfigurationTest {
    private final WebApplicationContextRunner runner =
            new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

    @Test
    void defaultsToAnInMemoryStoreAndAFilterWithNoRules() {
        runner.run(ctx -> {
            assertThat(ctx).hasSingleBean(InMemoryRateLimiter.class);
            assertThat(ctx.getBean(RateLimitFilter.class).rules()).isEmpty();
            assertThat(ctx).doesNotHaveBean(RateLimitListener.class);
        });
    }

    @Test
    void applicationsOwnLimiterAndFilterWin() {
        RateLimiter mine = InMemoryRateLimiter.create();
        runner.withBean("myLimiter", RateLimiter.class, () -> mine)
                .withPropertyValues("sluice.rules[0].requests_per_unit=5", "sluice.rules[0].unit=second")
                .run(ctx -> {
                    assertThat(ctx).getBeans(RateLimiter.class).containsOnlyKeys("myLimiter");
                    assertThat(ctx.getBean(RateLimitFilter.class).rules()).hasSize(1);
                });
        RateLimitFilter myFilter = RateLimitFilter.builder(mine).build();
        runner.withBean(RateLimitFilter.class, () -> myFilter)
                .run(ctx -> assertThat(ctx.getBean(RateLimitFilter.class)).isSameAs(myFilter));
    }

    @Test
    void micrometerCountersWhenARegistryExists() {
        runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .run(ctx -> assertThat(ctx.getBean(DecisionMeters.class)).isInstanceOf(SluiceMetrics.class));
        runner.run(ctx -> assertThat(ctx.getBean(DecisionMeters.class)).isSameAs(DecisionMeters.NONE));
    }

    @Test
    void theApplicationsOwnListenerIsToldAndTheRequestIsStillCounted() {
        List<String> told = new CopyOnWriteArrayList<>();
        runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(
                        RateLimitListener.class,
                        () -> (request, rules, outcome, decision) -> told.add(rules + " " + outcome))
                .withPropertyValues(
                        "sluice.rules[0].name=r", "sluice.rules[0].requests_per_unit=1", "sluice.rules[0].unit=hour")
                .run(ctx -> {
                    for (int i = 0; i < 2; i++) {
                        ctx.getBean(RateLimitFilter.class)
                                .doFilter(
                                        new MockHttpServletRequest("GET", "/x"),
                                        new MockHttpServletResponse(),
                                        (req, res) -> {});
                    }
                    assertThat(told).containsExactly("[r] ALLOWED", "[r] DENIED");
                    assertThat(ctx.getBean(SimpleMeterRegistry.class)
                                    .counter(
                                            SluiceMetrics.REQUESTS,
                                            "rules",
                                            "r",
                                            "outcome",
                                            "denied",
                                            "degradation",
                                            "none")
                                    .count())
                            .isEqualTo(1.0);
                    assertThat(ctx.getBean(DecisionCounts.class).outcomes("r"))
                            .containsEntry("allowed", 1L)
                            .containsEntry("denied", 1L);
                });
    }

    @Test
    void redisStoreIsWrappedInTheFailurePolicyAndStartsWhileRedisIsDown() throws Exception {
        int closedPort = RedisServer.freePort();
        runner.withPropertyValues("sluice.store=redis://127.0.0.1:" + closedPort, "sluice.failure-policy=fail_closed")
                .run(ctx -> {
                    FailSafeRateLimiter l = ctx.getBean(FailSafeRateLimiter.class);
                    assertThat(l.policy()).hasToString("FAIL_CLOSED");
                    assertThat(l.storeHealthy()).isFalse();
                });
    }

    @Test
    void datasourceStoreDecidesOnTheApplicationsPostgres() throws Exception {
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
            DataSource ds = pg.getPostgresDatabase();
            // a plain (unpooled) DataSource and every default: the store pools it and migrates before the context
            // starts
            runner.withBean(DataSource.class, () -> ds)
                    .withPropertyValues("sluice.store=datasource")
                    .run(ctx -> {
                        FailSafeRateLimiter l = ctx.getBean(FailSafeRateLimiter.class);
                        assertThat(l.storeHealthy())
                                .as("opened, migrated and warmed up while the context started")
                                .isTrue();
                        Limit limit = Limit.tokenBucket(2, Rate.perHour(2));
                        Decision first = l.tryAcquire("starter-pg", limit);
                        assertThat(first.degraded()).as(first.toString()).isFalse();
                        assertThat(first.remaining()).isEqualTo(1);
                        l.tryAcquire("starter-pg", limit);
                        assertThat(l.tryAcquire("starter-pg", limit).allowed()).isFalse();
                        try (Connection c = ds.getConnection();
                                Statement st = c.createStatement();
                                ResultSet rs = st.executeQuery("select count(*) from information_schema.tables"
                                        + " where table_name like 'sluice%'")) {
                            rs.next();
                            assertThat(rs.getInt(1)).isPositive(); // the migrations ran
                        }
                    });
        }
    }

    private String startupFailure(String... properties) {
        String[] message = new String[1];
        runner.withPropertyValues(properties).run(ctx -> {
            assertThat(ctx).hasFailed();
            Throwable t = ctx.getStartupFailure();
            while (t != null && !(t instanceof SluiceConfigException)) {
                t = t.getCause();
            }
            assertThat(t)
                    .as("a SluiceConfigException in " + ctx.getStartupFailure())
                    .isNotNull();
            message[0] = t.getMessage();
        });
        return message[0];
    }

    @Test
    void ruleNamingAnUnknownLimitFailsWithThePropertyPathAndTheFix() {
        assertThat(startupFailure(
                        "sluice.limits.basic.requests_per_unit=10",
                        "sluice.limits.basic.unit=minute",
                        "sluice.rules[0].paths=/api/**",
                        "sluice.rules[0].limit=gold"))
                .isEqualTo("sluice.rules[0].limit: unknown limit 'gold': define it under sluice.limits.gold"
                        + " or use one of [basic]");
    }

    @Test
    void ruleNamingAnUnknownTierFailsWithThePropertyPathAndTheFix() {
        assertThat(startupFailure(
                        "sluice.tiers=free,pro",
                        "sluice.limits.basic.requests_per_unit=10",
                        "sluice.limits.basic.unit=minute",
                        "sluice.rules[0].tiers.free=basic",
                        "sluice.rules[0].tiers.enterprise=basic"))
                .isEqualTo("sluice.rules[0].tiers.enterprise: unknown tier 'enterprise': declare it in sluice.tiers"
                        + " (now [free, pro]) or remove it");
        assertThat(startupFailure(
                        "sluice.tiers=free,pro",
                        "sluice.limits.basic.requests_per_unit=10",
                        "sluice.limits.basic.unit=minute",
                        "sluice.rules[0].tiers.pro=basic"))
                .isEqualTo("sluice.rules[0].tiers: rule 'rule-0' has no limit for the default tier 'free':"
                        + " add tiers.free: <limit>");
    }

    @Test
    void badCostAfterAndMaxInFlightFailWithThePropertyPathAndTheFix() {
        String[] tokens = {
            "sluice.rules[0].requests_per_unit=1000", "sluice.rules[0].unit=minute", "sluice.rules[0].key=header:K"
        };
        assertThat(startupFailure(with(tokens, "sluice.rules[0].cost-after.header=X-Tokens-Used")))
                .startsWith("sluice.rules[0].cost-after.estimate: missing: the permits reserved before the request"
                        + " goes on, e.g. estimate: 500");
        assertThat(startupFailure(with(tokens, "sluice.rules[0].cost-after.estimate=5000")))
                .startsWith("sluice.rules[0].cost-after.estimate: cost 5000 exceeds capacity 1000");
        assertThat(startupFailure(with(tokens, "sluice.rules[0].cost-after.estimate=0")))
                .isEqualTo("sluice.rules[0].cost-after.estimate: cost 0 must be at least 1");
        assertThat(startupFailure(
                        with(tokens, "sluice.rules[0].cost-after.estimate=10", "sluice.rules[0].cost-header=X-N")))
                .startsWith("sluice.rules[0].cost-after: both cost/cost-header and cost-after");
        assertThat(startupFailure(
                        with(tokens, "sluice.rules[0].cost-after.estimate=10", "sluice.rules[0].cost-after.header= ")))
                .startsWith("sluice.rules[0].cost-after.header: cost-after header name '");
        assertThat(startupFailure(with(tokens, "sluice.rules[0].max-in-flight=0")))
                .isEqualTo("sluice.rules[0].max-in-flight: rule 'rule-0': max in flight 0 must be at least 1"
                        + " (leave it out for no limit on requests in flight)");
        assertThat(startupFailure("sluice.rules[0].max-in-flight=2", "sluice.rules[0].in-flight-lease=0s"))
                .startsWith("sluice.rules[0].in-flight-lease: rule 'rule-0': in-flight lease PT0S is out of range");
        assertThat(startupFailure("sluice.rules[0].cost-after.estimate=10"))
                .startsWith("sluice.rules[0]: rule 'rule-0' has no limit: give exactly one of");
    }

    @Test
    void aRuleMayLimitWorkInFlightAlone() {
        runner.withPropertyValues("sluice.rules[0].max-in-flight=4", "sluice.rules[0].key=header:X-Api-Key")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    var rule = ctx.getBean(RateLimitFilter.class).rules().get(0);
                    assertThat(rule.maxInFlight()).isEqualTo(4);
                    assertThat(rule.limit()).isNull();
                    assertThat(rule.tiers()).isEmpty();
                });
    }

    private static String[] with(String[] base, String... more) {
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    @Test
    void badLimitsKeysAndStoresFailWithThePropertyPath() {
        assertThat(startupFailure("sluice.rules[0].requests_per_unit=10", "sluice.rules[0].unit=fortnight"))
                .startsWith("sluice.rules[0].unit: unknown unit 'fortnight': use one of second, minute, hour");
        assertThat(startupFailure("sluice.rules[0].unit=minute"))
                .startsWith("sluice.rules[0].requests_per_unit: missing");
        assertThat(startupFailure(
                        "sluice.rules[0].requests_per_unit=10",
                        "sluice.rules[0].unit=minute",
                        "sluice.rules[0].key=cookie"))
                .startsWith("sluice.rules[0].key: unknown key 'cookie'");
        assertThat(startupFailure("sluice.rules[0].paths=/api/**"))
                .startsWith("sluice.rules[0]: rule 'rule-0' has no limit");
        assertThat(startupFailure(
                        "sluice.rules[0].requests_per_unit=10",
                        "sluice.rules[0].unit=minute",
                        "sluice.rules[0].cost=11"))
                .startsWith("sluice.rules[0].cost: cost 11 exceeds capacity 10");
        assertThat(startupFailure("sluice.trusted-proxies=proxy.internal"))
                .startsWith("sluice.trusted-proxies: trusted proxy 'proxy.internal' is not an address block");
        assertThat(startupFailure("sluice.store=mongodb://x"))
                .isEqualTo("sluice.store: unknown store"
                        + " 'mongodb://x': use memory, redis://host:6379 (or rediss://) or datasource");
        assertThat(startupFailure("sluice.store=datasource"))
                .startsWith("sluice.store: 'datasource' but the" + " application has no single DataSource bean");
        // a store that refuses the configuration: its own message, not a background retry with rate limiting off
        assertThat(startupFailure("sluice.store=redis://no-such-host.invalid:6379"))
                .startsWith("sluice.store: Redis"
                        + " at redis://no-such-host.invalid:6379 names a host that does not resolve (")
                .endsWith("): check the host name in the URI");
    }

    @Test
    void failureAnalysisNamesThePropertyToFix() {
        FailureAnalysis a = new SluiceConfigFailureAnalyzer()
                .analyze(new IllegalStateException(
                        "wrapped", new SluiceConfigException("sluice.rules[0].limit", "unknown limit 'gold'")));
        assertThat(a.getDescription())
                .isEqualTo("Sluice rate limiting is misconfigured: sluice.rules[0].limit:" + " unknown limit 'gold'");
        assertThat(a.getAction()).contains("sluice.rules[0].limit");
    }
}
