package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.spring.SluiceAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Which beans the auto-configuration defines, beside the starter's, and when it steps back. */
class SluiceGatewayAutoConfigurationTest {
    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(SluiceGatewayAutoConfiguration.class, SluiceAutoConfiguration.class))
            .withUserConfiguration(GatewayParts.class);

    /** What the gateway's own auto-configuration would give: its ConfigurationService. */
    @Configuration(proxyBeanMethods = false)
    static class GatewayParts {
        @Bean
        ConfigurationService gatewayConfigurationService() {
            return new ConfigurationService(
                    new DefaultListableBeanFactory(), ApplicationConversionService::new, () -> null);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnStore {
        @Bean
        RateLimiter myStore() {
            return InMemoryRateLimiter.create();
        }
    }

    @Test
    void oneStoreForTheGatewayAndTheStarterStepsBack() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeanNamesForType(RateLimiter.class)).containsExactly("sluiceStore");
            assertThat(context.getBean("sluiceRateLimiter")).isInstanceOf(SluiceRateLimiter.class);
            SluiceRateLimiter limiter = context.getBean(SluiceRateLimiter.class);
            assertThat(limiter.getStore())
                    .isSameAs(context.getBean(RateLimiter.class))
                    .isInstanceOf(InMemoryRateLimiter.class);
            assertThat(limiter.isIncludeHeaders()).isTrue();
        });
    }

    @Test
    void theApplicationsOwnStoreDecides() {
        runner.withUserConfiguration(OwnStore.class).run(context -> {
            assertThat(context.getBeanNamesForType(RateLimiter.class)).containsExactly("myStore");
            assertThat(context.getBean(SluiceRateLimiter.class).getStore()).isSameAs(context.getBean("myStore"));
        });
    }

    @Test
    void headerSwitchesLiveWhereRedisRateLimitersDo() {
        runner.withPropertyValues(
                        "spring.cloud.gateway.server.webflux.sluice-rate-limiter.include-headers=false",
                        "spring.cloud.gateway.server.webflux.sluice-rate-limiter.remaining-header=X-Left")
                .run(context -> {
                    SluiceRateLimiter limiter = context.getBean(SluiceRateLimiter.class);
                    assertThat(limiter.isIncludeHeaders()).isFalse();
                    assertThat(limiter.getRemainingHeader()).isEqualTo("X-Left");
                });
    }

    @Test
    void aBadStoreStopsStartupNamingTheProperty() {
        runner.withPropertyValues("sluice.store=cassandra://x").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageStartingWith("sluice.store: unknown store 'cassandra://x'");
        });
    }

    @Test
    void sluiceEnabledFalseDefinesNothing() {
        runner.withPropertyValues("sluice.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(SluiceRateLimiter.class);
            assertThat(context).doesNotHaveBean(RateLimiter.class);
        });
    }
}
