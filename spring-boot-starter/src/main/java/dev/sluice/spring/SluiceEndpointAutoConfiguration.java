package dev.sluice.spring;

import dev.sluice.RateLimiter;
import dev.sluice.servlet.RateLimitFilter;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * The {@code ratelimits} Actuator endpoint, when Actuator is on the classpath and the endpoint is exposed
 * ({@code management.endpoints.web.exposure.include=ratelimits}). It exists with {@code sluice.enabled=false} too,
 * and then says so.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
        })
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    RateLimitsEndpoint sluiceRateLimitsEndpoint(
            SluiceProperties properties,
            ObjectProvider<RateLimiter> limiter,
            ObjectProvider<DecisionCounts> counts,
            ObjectProvider<RateLimitedMethods> methods,
            ObjectProvider<SluiceRefresh> refresh,
            ListableBeanFactory beans) {
        SluiceRefresh r = refresh.getIfAvailable();
        return new RateLimitsEndpoint(
                r == null ? () -> properties : r::current,
                limiter::getIfUnique,
                counts.getIfAvailable(),
                methods.getIfAvailable(),
                () -> Filters.present(beans));
    }

    /** Loaded only where the servlet API is, since RateLimitFilter is a servlet Filter. */
    private static final class Filters {
        static boolean present(ListableBeanFactory beans) {
            return ClassUtils.isPresent("jakarta.servlet.Filter", Filters.class.getClassLoader())
                    && beans.getBeanNamesForType(RateLimitFilter.class, false, false).length > 0;
        }
    }
}
