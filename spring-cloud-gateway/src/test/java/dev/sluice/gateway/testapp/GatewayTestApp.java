package dev.sluice.gateway.testapp;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A gateway with nothing of its own but a key resolver: requests are counted per {@code X-User} header (a request
 * without one is refused by the filter, as Spring Cloud Gateway refuses an empty key). Its routes are in the test
 * resources' application.yml and lead to a {@code Backend} whose URI the tests set as {@code backend.uri}.
 */
@SpringBootApplication
public class GatewayTestApp {

    @Bean
    KeyResolver userKeyResolver() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
    }
}
