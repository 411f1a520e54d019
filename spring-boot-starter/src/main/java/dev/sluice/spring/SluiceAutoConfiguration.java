package dev.sluice.spring;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.servlet.ClientIpResolver;
import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.servlet.RateLimitListener;
import dev.sluice.servlet.RateLimitRule;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.Filter;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Rate limiting for a Spring Boot application from {@code sluice.*}: a {@link RateLimiter} from
 * {@code sluice.store} (remote stores behind {@code FailSafeRateLimiter} with {@code sluice.failure-policy}), a
 * {@link RateLimitFilter} from {@code sluice.rules} registered for every request (servlet applications only),
 * {@link RateLimited} methods (answered 429 in Spring MVC and WebFlux applications), their {@link DecisionCounts} and
 * Micrometer counters when Micrometer is present. Each bean is defined only where what it uses is: nothing that
 * names the servlet API is loaded in a reactive application. Every bean backs off when the application defines its
 * own; {@code sluice.enabled=false} defines none. Rules and annotations are checked at startup: a bad one stops the
 * application with the property path (or the method) and the fix.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration"
        })
@ConditionalOnProperty(prefix = "sluice", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

    /** The store named by {@code sluice.store}; a remote one behind the failure policy. */
    @Bean
    @ConditionalOnMissingBean(RateLimiter.class)
    public RateLimiter sluiceRateLimiter(
            SluiceProperties properties, ObjectProvider<Ticker> ticker, ObjectProvider<DataSource> dataSource) {
        return StoreFactory.create(properties, ticker.getIfUnique(), dataSource::getIfUnique);
    }

    /**
     * {@link RateLimited} methods, checked and advised as their beans are created. Static, as a post-processor is
     * created before other beans: it binds {@code sluice.*} itself rather than asking for the properties bean.
     */
    @Bean
    static RateLimitedMethods sluiceRateLimitedMethods(Environment environment) {
        SluiceProperties p = Binder.get(environment).bindOrCreate("sluice", SluiceProperties.class);
        boolean proxyTargetClass = environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true);
        return new RateLimitedMethods(RuleFactory.namedLimits(p), p.isShadowMode(), proxyTargetClass);
    }

    /**
     * The properties in force and what is rebuilt from them when they change: the named limits and shadow mode of
     * {@link RateLimited} methods here, the filter's rules where there is a filter.
     */
    @Bean
    @ConditionalOnMissingBean
    SluiceRefresh sluiceRefresh(Environment environment, RateLimitedMethods methods) {
        SluiceRefresh refresh = new SluiceRefresh(environment);
        refresh.add(next -> methods.refreshed(RuleFactory.namedLimits(next), next.isShadowMode()));
        return refresh;
    }

    /** With Spring Cloud: a change of {@code sluice.*} and a refresh rebuild the rules (see {@link SluiceRefresh}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
    static class CloudRefresh {
        @Bean
        EnvironmentChangeListener sluiceEnvironmentChangeListener(SluiceRefresh refresh) {
            return new EnvironmentChangeListener(refresh);
        }
    }

    /**
     * Where the filter, {@link RateLimited} methods and the gateway count their decisions: the {@code ratelimits}
     * endpoint's counts, and the meters when there are some ({@code sluice.requests}, {@code sluice.calls}).
     */
    @Bean
    @ConditionalOnMissingBean
    DecisionCounts sluiceDecisionCounts(ObjectProvider<DecisionMeters> meters) {
        return new DecisionCounts(meters.getIfAvailable(() -> DecisionMeters.NONE));
    }

    /**
     * Servlet applications: the filter and its registration. The registered filter is a {@link RefreshedFilter} over
     * the starter's own {@link RateLimitFilter}, rebuilt by a refresh; an application's own one is registered as it
     * is, never replaced.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(Filter.class)
    static class Web {
        /** The filter {@link #sluiceRateLimitFilter} built, or null when the application has its own. */
        private volatile @Nullable RateLimitFilter built;

        @Bean
        @ConditionalOnMissingBean(RateLimitFilter.class)
        RateLimitFilter sluiceRateLimitFilter(
                RateLimiter limiter,
                SluiceRefresh refresh,
                ObjectProvider<RateLimitListener> listener,
                DecisionCounts counts) {
            RateLimitListener told = counted(counts, listener.getIfAvailable(() -> RateLimitListener.NONE));
            RateLimitFilter f = filter(limiter, refresh.current(), told);
            built = f;
            return f;
        }

        /** The filter of {@code p}'s rules and settings, checked: a bad one throws naming the property. */
        static RateLimitFilter filter(RateLimiter limiter, SluiceProperties p, RateLimitListener listener) {
            List<RateLimitRule> rules = RuleFactory.rules(p);
            RateLimitFilter.Builder b = RateLimitFilter.builder(limiter)
                    .shadowMode(p.isShadowMode())
                    .tierAttribute(p.getTierAttribute())
                    .defaultTier(p.getDefaultTier())
                    .problemType(p.getProblemType())
                    .listener(listener);
            try {
                b.clientIp(
                        p.getTrustedProxies().isEmpty()
                                ? ClientIpResolver.peerOnly()
                                : ClientIpResolver.trusting(p.getForwardedHeader(), p.getTrustedProxies()));
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException("sluice.trusted-proxies", String.valueOf(e.getMessage()));
            }
            rules.forEach(b::rule);
            try {
                return b.build();
            } catch (IllegalArgumentException e) { // RuleFactory checked the rest: a max in flight on this store
                throw new SluiceConfigException("sluice.store", String.valueOf(e.getMessage()));
            }
        }

        /**
         * The listener the filter tells: the counts (and through them the meters), then the application's own
         * {@link RateLimitListener} bean if it has one. Here, in the servlet-only configuration, because it names
         * servlet types: {@link DecisionCounts} is defined in every application, reactive ones included.
         */
        private static RateLimitListener counted(DecisionCounts counts, RateLimitListener next) {
            return (request, rules, outcome, decision) -> {
                counts.request(rules, outcome, decision);
                next.onDecision(request, rules, outcome, decision);
            };
        }

        @Bean
        @ConditionalOnMissingBean(name = "sluiceRateLimitFilterRegistration")
        FilterRegistrationBean<Filter> sluiceRateLimitFilterRegistration(
                RateLimitFilter filter,
                SluiceRefresh refresh,
                RateLimiter limiter,
                ObjectProvider<RateLimitListener> listener,
                DecisionCounts counts) {
            Filter registered = filter;
            if (filter == built) {
                RefreshedFilter refreshed = new RefreshedFilter(filter);
                RateLimitListener told = counted(counts, listener.getIfAvailable(() -> RateLimitListener.NONE));
                refresh.add(next -> {
                    RateLimitFilter rebuilt = filter(limiter, next, told);
                    rebuilt.setEnabled(refreshed.current().isEnabled()); // as the application last set it
                    return () -> refreshed.replace(rebuilt);
                });
                registered = refreshed;
            }
            FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>(registered);
            r.setName("sluiceRateLimitFilter");
            r.setOrder(refresh.current().getFilterOrder());
            r.addUrlPatterns("/*");
            return r;
        }

        /**
         * The {@link RateLimitFilter} bean is not registered by itself (Spring Boot registers every {@code Filter} bean
         * that no registration names): {@link #sluiceRateLimitFilterRegistration} registers it, or the
         * {@link RefreshedFilter} over it.
         */
        @Bean
        FilterRegistrationBean<RateLimitFilter> sluiceRateLimitFilterBean(RateLimitFilter filter) {
            FilterRegistrationBean<RateLimitFilter> r = new FilterRegistrationBean<>(filter);
            r.setName("sluiceRateLimitFilterBean");
            r.setEnabled(false);
            return r;
        }
    }

    /** Spring MVC: a {@link RateLimitExceededException} is answered 429, as the filter answers. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
    static class MvcAnswers {

        @Bean
        @ConditionalOnMissingBean(name = "sluiceRateLimitExceededHandler")
        RateLimitExceededMvcHandler sluiceRateLimitExceededHandler(SluiceProperties p) {
            return new RateLimitExceededMvcHandler(p.getProblemType());
        }
    }

    /** Spring WebFlux: a {@link RateLimitExceededException} is answered 429, as the filter answers. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = "org.springframework.web.server.WebExceptionHandler")
    static class WebFluxAnswers {

        @Bean
        @ConditionalOnMissingBean(name = "sluiceRateLimitExceededHandler")
        RateLimitExceededWebFluxHandler sluiceRateLimitExceededHandler(SluiceProperties p) {
            return new RateLimitExceededWebFluxHandler(p.getProblemType());
        }
    }

    /**
     * Micrometer's counters of what the filter, the methods and the gateway did, when Micrometer is on the class path
     * and the application has a registry. {@link SluiceMetrics} names no servlet type: reactive applications have it
     * too.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean(DecisionMeters.class)
        DecisionMeters sluiceMetrics(ObjectProvider<MeterRegistry> registry) {
            MeterRegistry r = registry.getIfUnique();
            return r == null ? DecisionMeters.NONE : new SluiceMetrics(r);
        }
    }
}
