package dev.sluice.gateway;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.ApplicationListener;

/**
 * Checks, as each route loads, that a route whose {@code RequestRateLimiter} decides with a {@link SluiceRateLimiter}
 * has its {@code sluice-rate-limiter.*} arguments. Without it such a route (its arguments still named
 * {@code redis-rate-limiter.*}, say) would load, since Spring Cloud Gateway binds a limiter's arguments only when
 * there are some, and answer 500 to every request.
 *
 * <p>Only the filter factory knows, as a route loads, which limiter its filter decides with (the route's
 * {@code rate-limiter} argument, else the factory's default limiter). So this post-processor replaces Spring Cloud
 * Gateway's {@link RequestRateLimiterGatewayFilterFactory} bean by a subclass that is the same factory, with the same
 * defaults and settings, and one step more in {@code apply}: it asks the limiter
 * ({@link SluiceRateLimiter#routeLoaded}) before building the filter. A failure there is a route definition error
 * like any bad argument: the gateway does not start, or with
 * {@code spring.cloud.gateway.server.webflux.fail-on-route-definition-error: false} it starts without that route,
 * logging Spring Cloud Gateway's warning with the message. It also listens to the routes' arguments, to name those of
 * another rate limiter in the message.
 */
final class RouteArgumentsCheck
        implements BeanPostProcessor, ApplicationEventPublisherAware, ApplicationListener<FilterArgsEvent> {
    /** Per route, its arguments of another rate limiter ({@code redis-rate-limiter.replenishRate}). */
    private final Map<String, Set<String>> otherArguments = new ConcurrentHashMap<>();

    /** Null until Spring calls {@link #setApplicationEventPublisher}, before any bean is post-processed. */
    private @Nullable ApplicationEventPublisher publisher;

    @Override
    public void setApplicationEventPublisher(ApplicationEventPublisher publisher) {
        this.publisher = publisher;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean.getClass() == RequestRateLimiterGatewayFilterFactory.class) { // not an application's own subclass
            Checked checked = new Checked((RequestRateLimiterGatewayFilterFactory) bean);
            checked.setApplicationEventPublisher(publisher);
            return checked;
        }
        return bean;
    }

    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        for (String arg : event.getArgs().keySet()) {
            if (arg.contains("-rate-limiter.") && !arg.startsWith(SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME)) {
                otherArguments
                        .computeIfAbsent(event.getRouteId(), k -> new TreeSet<>())
                        .add(arg);
            }
        }
    }

    /** Spring Cloud Gateway's factory, asking a Sluice limiter before it builds a route's filter. */
    private final class Checked extends RequestRateLimiterGatewayFilterFactory {
        Checked(RequestRateLimiterGatewayFilterFactory gateways) {
            super(gateways.getDefaultRateLimiter(), gateways.getDefaultKeyResolver());
            setDenyEmptyKey(gateways.isDenyEmptyKey());
            setEmptyKeyStatusCode(gateways.getEmptyKeyStatusCode());
        }

        /** {@code RequestRateLimiter}, the name routes use, whatever this class is called. */
        @Override
        public String name() {
            return "RequestRateLimiter";
        }

        @Override
        public GatewayFilter apply(Config config) {
            RateLimiter<?> limiter =
                    config.getRateLimiter() != null ? config.getRateLimiter() : getDefaultRateLimiter();
            String routeId = config.getRouteId();
            if (limiter instanceof SluiceRateLimiter sluice && routeId != null) {
                sluice.routeLoaded(routeId, otherArguments.remove(routeId));
            }
            return super.apply(config);
        }
    }
}
