package dev.sluice.servlet;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/** Computed once per request, on first use. */
final class RequestFactsOnce implements KeyResolver.RequestFacts {
    private final HttpServletRequest request;
    private final String path;
    private final ClientIpResolver resolver;
    private @Nullable String clientIp;
    /** The pattern of the rule asking, set before it asks. */
    String pattern = "/**";

    RequestFactsOnce(HttpServletRequest request, String path, ClientIpResolver resolver) {
        this.request = request;
        this.path = path;
        this.resolver = resolver;
    }

    @Override
    public String clientIp() {
        if (clientIp == null) {
            clientIp = resolver.resolve(request);
        }
        return clientIp;
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String matchedPattern() {
        return pattern;
    }
}
