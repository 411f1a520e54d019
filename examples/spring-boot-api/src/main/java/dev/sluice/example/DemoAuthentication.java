package dev.sluice.example;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Stand-in for real authentication (use Spring Security in an application): {@code Authorization: Bearer TOKEN}
 * with a token from {@code example.users} ({@code token: user:tier}) makes the request that user's, and sets
 * the {@code sluice.tier} request attribute that chooses the user's limits. It runs where Spring Security would,
 * before Sluice's filter.
 */
@Configuration
@ConfigurationProperties(prefix = "example")
public class DemoAuthentication {
    private Map<String, String> users = new LinkedHashMap<>();

    public Map<String, String> getUsers() {
        return users;
    }

    public void setUsers(Map<String, String> users) {
        this.users = users;
    }

    @Bean
    FilterRegistrationBean<Filter> demoBearerTokens() {
        FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>((req, res, chain) -> {
            HttpServletRequest http = (HttpServletRequest) req;
            String auth = http.getHeader("Authorization");
            String entry = auth != null && auth.startsWith("Bearer ")
                    ? users.get(auth.substring(7).strip())
                    : null;
            if (entry == null) {
                chain.doFilter(req, res);
                return;
            }
            int colon = entry.indexOf(':');
            String name = colon < 0 ? entry : entry.substring(0, colon);
            http.setAttribute("sluice.tier", colon < 0 ? "free" : entry.substring(colon + 1));
            Principal principal = () -> name;
            chain.doFilter(
                    new HttpServletRequestWrapper(http) {
                        @Override
                        public Principal getUserPrincipal() {
                            return principal;
                        }
                    },
                    res);
        });
        r.setOrder(-100); // Spring Security's place: before Sluice (-90), so the user is known
        return r;
    }
}
