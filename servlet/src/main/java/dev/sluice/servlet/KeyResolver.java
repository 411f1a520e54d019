package dev.sluice.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a rule counts requests by. The filter prefixes the value with the rule's name, so the same value under
 * two rules is two keys. A resolver returns null when the rule does not apply to the request (no principal, no
 * header): the request is then not limited by that rule, which is how "per user" rules skip anonymous calls.
 */
@FunctionalInterface
public interface KeyResolver {

    /**
     * The key for this request, or null when the rule does not apply.
     *
     * @param facts what the filter already knows: the client address, the pattern that matched
     */
    @Nullable
    String resolve(HttpServletRequest request, RequestFacts facts);

    /** The client address, honouring trusted proxies only (see {@link ClientIpResolver}). */
    static KeyResolver clientIp() {
        return (request, facts) -> facts.clientIp();
    }

    /** The authenticated principal's name; anonymous requests are not limited by the rule. */
    static KeyResolver principal() {
        return (request, facts) -> {
            Principal p = request.getUserPrincipal();
            return p == null || p.getName() == null || p.getName().isEmpty() ? null : p.getName();
        };
    }

    /** The value of a request header, such as an API key; requests without it are not limited by the rule. */
    static KeyResolver header(String name) {
        Objects.requireNonNull(name, "header name must not be null: e.g. X-Api-Key");
        return (request, facts) -> {
            String v = request.getHeader(name);
            return v == null || v.isEmpty() ? null : v;
        };
    }

    /** The request path inside the application: every path has its own budget. */
    static KeyResolver path() {
        return (request, facts) -> facts.path();
    }

    /** The route template: the rule's path pattern that matched, so {@code /items/*} is one budget for all ids. */
    static KeyResolver route() {
        return (request, facts) -> facts.matchedPattern();
    }

    /** One budget for every request the rule matches. */
    static KeyResolver global() {
        return (request, facts) -> "*";
    }

    /** What the filter knows about a request when it asks for a key. */
    interface RequestFacts {
        /** The client address (see {@link ClientIpResolver}). */
        String clientIp();

        /** The decoded, normalized path inside the application. */
        String path();

        /** The rule's pattern that matched, or {@code /**} when the rule matches every path. */
        String matchedPattern();
    }
}
