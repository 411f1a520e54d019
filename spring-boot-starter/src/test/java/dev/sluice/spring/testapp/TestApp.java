package dev.sluice.spring.testapp;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.security.Principal;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small API for the starter's tests: {@code /api/hello}, {@code /api/items/{id}} and an unlimited
 * {@code /health}. Its "authentication" filter runs where Spring Security would (order -100, before Sluice's -90):
 * the principal comes from {@code X-Test-User} and the tier attribute from {@code X-Test-Tier}.
 */
@SpringBootApplication
public class TestApp {

    @RestController
    static class Api {
        @GetMapping("/api/hello")
        String hello() {
            return "hello";
        }

        @GetMapping("/api/items/{id}")
        String item(@PathVariable String id) {
            return "item " + id;
        }

        @GetMapping("/health")
        String health() {
            return "ok";
        }
    }

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    FilterRegistrationBean<Filter> testAuthentication() {
        FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>((req, res, chain) -> {
            HttpServletRequest http = (HttpServletRequest) req;
            String tier = http.getHeader("X-Test-Tier");
            if (tier != null) {
                http.setAttribute("sluice.tier", tier);
            }
            String user = http.getHeader("X-Test-User");
            if (user == null) {
                chain.doFilter(req, res);
                return;
            }
            Principal principal = () -> user;
            chain.doFilter(
                    new HttpServletRequestWrapper(http) {
                        @Override
                        public Principal getUserPrincipal() {
                            return principal;
                        }
                    },
                    res);
        });
        r.setOrder(-100);
        return r;
    }
}
