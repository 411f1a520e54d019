package dev.sluice.gateway;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.spring.DecisionCounts;
import dev.sluice.spring.SluiceAutoConfiguration;
import dev.sluice.spring.SluiceProperties;
import dev.sluice.spring.StoreFactory;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.DispatcherHandler;

/**
 * Spring Cloud Gateway's {@code RequestRateLimiter} on Sluice: a {@link SluiceRateLimiter} bean named
 * {@code sluiceRateLimiter} (routes name it {@code rate-limiter: "#{@sluiceRateLimiter}"}; as the gateway's only
 * rate limiter it is also the filter's default, as {@code redisRateLimiter} is), deciding on the store
 * {@code sluice.store} names, opened as the Spring Boot starter opens it: memory, {@code redis://…} or the
 * application's {@code datasource}, remote stores behind {@code sluice.failure-policy} within
 * {@code sluice.budget}.
 *
 * <p>It runs before the gateway's own auto-configuration, as Spring Cloud Gateway's Redis configuration does, so
 * that the gateway sees a rate limiter and defines the {@code RequestRateLimiter} filter and its default key
 * resolver; and before the starter's, whose store bean (also named {@code sluiceRateLimiter}, for servlet
 * applications) steps back for the one defined here, {@code sluiceStore}. Both beans step back for the
 * application's own. Decisions are counted in the starter's {@link DecisionCounts}, so the {@code ratelimits}
 * endpoint lists the routes and Micrometer's {@code sluice.requests} counts them, and a route limited by Sluice
 * without its arguments fails as the routes load ({@link RouteArgumentsCheck}). {@code sluice.enabled=false}
 * defines none of these.
 */
@AutoConfiguration(
        before = {GatewayAutoConfiguration.class, SluiceAutoConfiguration.class},
        afterName = "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration")
@ConditionalOnClass({AbstractRateLimiter.class, DispatcherHandler.class})
@ConditionalOnProperty(prefix = "sluice", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceGatewayAutoConfiguration {

    /** The store named by {@code sluice.store}; a remote one behind the failure policy. */
    @Bean
    @ConditionalOnMissingBean(RateLimiter.class)
    public RateLimiter sluiceStore(
            SluiceProperties properties, ObjectProvider<Ticker> ticker, ObjectProvider<DataSource> dataSource) {
        return StoreFactory.create(properties, ticker.getIfUnique(), dataSource::getIfUnique);
    }

    /**
     * The gateway's rate limiter, configured per route by {@code sluice-rate-limiter.*} arguments, counting its
     * decisions where the starter counts the filter's and the methods' (the {@code ratelimits} endpoint,
     * {@code sluice.requests}).
     */
    @Bean
    @ConditionalOnMissingBean(SluiceRateLimiter.class)
    public SluiceRateLimiter sluiceRateLimiter(
            RateLimiter sluiceStore, ConfigurationService configurationService, ObjectProvider<DecisionCounts> counts) {
        SluiceRateLimiter limiter = new SluiceRateLimiter(sluiceStore, configurationService);
        counts.ifAvailable(limiter::countingIn);
        return limiter;
    }

    /**
     * The {@code SluiceLimit} route filter: max in flight per key, and costs settled when the exchange ends (what
     * {@code RequestRateLimiter} cannot do).
     */
    @Bean
    @ConditionalOnMissingBean(SluiceLimitGatewayFilterFactory.class)
    public SluiceLimitGatewayFilterFactory sluiceLimitGatewayFilterFactory(
            RateLimiter sluiceStore, ObjectProvider<KeyResolver> keyResolvers) {
        return new SluiceLimitGatewayFilterFactory(sluiceStore, keyResolvers);
    }

    /** A route limited by Sluice without its arguments fails as the routes load, naming them. */
    @Bean
    static RouteArgumentsCheck sluiceRouteArgumentsCheck() {
        return new RouteArgumentsCheck();
    }
}
