package dev.sluice.example.gateway;

import java.net.InetSocketAddress;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway as its users write one: routes and RequestRateLimiter filters in application.yml, a
 * {@link KeyResolver} bean, nothing else. The limiter is Sluice's ({@code sluiceRateLimiter}, auto-configured by
 * sluice-spring-cloud-gateway); the routes lead to {@link DemoBackend}, or to {@code BACKEND_URI}.
 */
@SpringBootApplication
public class GatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(GatewayApplication.class, args);
    }

    /** Callers are counted by their X-Api-Key, or by their address when they send none. */
    @Bean
    KeyResolver apiKeyResolver() {
        return exchange -> {
            String apiKey = exchange.getRequest().getHeaders().getFirst("X-Api-Key");
            if (apiKey != null && !apiKey.isBlank()) {
                return Mono.just("key:" + apiKey);
            }
            InetSocketAddress peer = exchange.getRequest().getRemoteAddress();
            return Mono.justOrEmpty(
                    peer == null ? null : "ip:" + peer.getAddress().getHostAddress());
        };
    }
}
