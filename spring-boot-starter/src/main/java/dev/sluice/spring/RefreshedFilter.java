package dev.sluice.spring;

import dev.sluice.servlet.RateLimitFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;

/**
 * The filter the starter registers for its own {@link RateLimitFilter}: each request goes to the one built from the
 * properties in force, the one of the start until a {@link SluiceRefresh} puts a rebuilt one in its place (a
 * {@code RateLimitFilter}'s rules are fixed when it is built). A request under way finishes with the filter it began
 * with.
 */
final class RefreshedFilter implements Filter {
    private volatile RateLimitFilter current;

    RefreshedFilter(RateLimitFilter first) {
        this.current = first;
    }

    RateLimitFilter current() {
        return current;
    }

    void replace(RateLimitFilter next) {
        this.current = next;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        current.doFilter(req, res, chain);
    }
}
