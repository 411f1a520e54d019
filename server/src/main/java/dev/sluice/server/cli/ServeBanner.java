package dev.sluice.server.cli;

import dev.sluice.server.CannotListenException;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * What {@code sluice serve} tells a person: the banner it prints once it serves (the addresses, the routes, a
 * {@code curl} to try), and the reason of the {@code event=start_refused} line when an address cannot be listened
 * on.
 */
final class ServeBanner {
    private ServeBanner() {}

    /**
     * The port and the flag that chose it, e.g. {@code 127.0.0.1:8080 is in use (--http): Address already in use; stop
     * what listens there (another sluice serve?) or choose another port, e.g. --http 127.0.0.1:8180 (--http off: no
     * HTTP)}: the reason of the {@code event=start_refused} line.
     */
    static String cannotListen(CannotListenException e) {
        String flag = "--" + e.endpoint();
        InetSocketAddress a = e.address();
        String where = host(a) + ":" + a.getPort();
        String other = host(a) + ":" + (a.getPort() == 0 || a.getPort() > 65535 - 100 ? 0 : a.getPort() + 100);
        return where + (e.inUse() ? " is in use (" : " cannot be listened on (") + flag + "): "
                + e.reason()
                + (e.inUse()
                        ? "; stop what listens there (another sluice serve?) or choose another port"
                        : "; choose another address")
                + ", e.g. " + flag + " " + other + " (" + flag + " off: no "
                + ("http".equals(e.endpoint()) ? "HTTP" : "gRPC") + ")";
    }

    /**
     * @param budget the store's budget per call, null for the in-memory store (which has no failure policy)
     * @param failurePolicy as {@code --failure-policy} was given
     */
    static void print(
            SluiceServer server,
            RuleSet rules,
            String rulesFrom,
            String storeName,
            @Nullable Duration budget,
            String failurePolicy,
            boolean auth,
            boolean reflection) {
        String store = budget == null
                ? storeName
                : storeName + " (budget " + budget.toMillis() + " ms a call, then "
                        + failurePolicy.toLowerCase(Locale.ROOT) + ")";
        StringBuilder b = new StringBuilder();
        b.append("sluice is serving ")
                .append(rules.domains().size())
                .append(" domain(s), ")
                .append(rules.ruleCount())
                .append(" rule(s) from ")
                .append(rulesFrom)
                .append(", store: ")
                .append(store)
                .append('\n');
        InetSocketAddress h = server.httpAddress();
        if (h != null) {
            String base = "http://" + host(h) + ":" + h.getPort();
            b.append("  HTTP  ")
                    .append(base)
                    .append("   POST /v1/check /json · GET /healthz /readyz /healthcheck /metrics\n");
            b.append("  Dashboard  ").append(base).append("/   (live rules, decisions and denied keys)\n");
        }
        InetSocketAddress g = server.grpcAddress();
        if (g != null) {
            b.append("  gRPC  ")
                    .append(host(g))
                    .append(':')
                    .append(g.getPort())
                    .append("   envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit")
                    .append(
                            reflection
                                    ? " · server reflection (grpcurl -plaintext " + host(g) + ":" + g.getPort()
                                            + " list)\n"
                                    : "\n");
        }
        if (h != null) {
            boolean builtin =
                    rules.domains().containsKey("example") && rules.domains().containsKey("api");
            String domain =
                    builtin ? "example" : rules.domains().keySet().iterator().next();
            String entry = builtin ? "{\"key\":\"user\",\"value\":\"alice\"}" : "{\"key\":\"KEY\",\"value\":\"VALUE\"}";
            b.append("Try it:\n  curl -i -X POST http://")
                    .append(host(h))
                    .append(':')
                    .append(h.getPort())
                    .append("/v1/check -H 'Content-Type: application/json'")
                    .append(auth ? " -H \"Authorization: Bearer $SLUICE_TOKEN\"" : "")
                    .append(" -d '{\"domain\":\"")
                    .append(domain)
                    .append("\",\"descriptors\":[{\"entries\":[")
                    .append(entry)
                    .append("]}]}'\n");
        }
        b.append("Stop with Ctrl-C (in-flight requests finish first).");
        System.out.println(b);
        System.out.flush();
    }

    static String host(InetSocketAddress a) {
        String h = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        return h.contains(":") ? "[" + h + "]" : h;
    }
}
