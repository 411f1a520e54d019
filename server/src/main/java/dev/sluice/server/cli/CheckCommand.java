package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.server.decision.RateLimitHeaders;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice check}: one decision from the command line, asked of a running service. Exit code 0 when
 * allowed, 1 when over the limit, 2 when the request failed.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Ask a running service for one decision. Exit 0 = OK, 1 = OVER_LIMIT, 2 = error.",
        footer = {"", "Example:", "  sluice check --domain api remote_address=198.51.100.1",
                "  sluice check --domain api --hits 0 plan=free,user=42   (check only: consumes nothing)"})
final class CheckCommand implements Callable<Integer> {

    @Option(names = "--url", defaultValue = "http://127.0.0.1:8080", description = "Service base URL (default ${DEFAULT-VALUE})")
    String url;

    @Option(names = {"-d", "--domain"}, required = true, description = "Rules domain")
    String domain;

    @Option(names = "--hits", defaultValue = "1", description = "Permits to spend; 0 = check only (default ${DEFAULT-VALUE})")
    long hits;

    @Option(names = "--token", defaultValue = "${env:SLUICE_TOKEN}", description = "Bearer token (default: $SLUICE_TOKEN)")
    String token;

    @Parameters(arity = "1..*", paramLabel = "KEY=VALUE[,KEY=VALUE...]",
            description = "One descriptor per argument; entries separated by commas")
    List<String> descriptors;

    @Override
    public Integer call() throws Exception {
        ObjectMapper m = new ObjectMapper();
        ObjectNode body = m.createObjectNode().put("domain", domain).put("hits", hits);
        ArrayNode ds = body.putArray("descriptors");
        for (String d : descriptors) {
            ArrayNode entries = ds.addObject().putArray("entries");
            for (String kv : d.split(",")) {
                int eq = kv.indexOf('=');
                if (eq <= 0) {
                    System.err.println("sluice check: '" + kv + "' is not KEY=VALUE");
                    return 2;
                }
                entries.addObject().put("key", kv.substring(0, eq)).put("value", kv.substring(eq + 1));
            }
        }
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + "/v1/check"))
                .timeout(Duration.ofSeconds(5))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(m.writeValueAsString(body)));
        if (token != null && !token.isBlank()) {
            req.header("Authorization", "Bearer " + token.trim());
        }
        HttpResponse<String> resp;
        try {
            resp = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build()
                    .send(req.build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            System.err.println("sluice check: cannot reach " + url + ": " + e
                    + " (is 'sluice serve' running? pass --url)");
            return 2;
        }
        System.out.println("HTTP " + resp.statusCode());
        for (String h : List.of("RateLimit-Policy", "RateLimit", "Retry-After", RateLimitHeaders.DEGRADED)) {
            resp.headers().firstValue(h).ifPresent(v -> System.out.println(h + ": " + v));
        }
        try {
            System.out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(m.readTree(resp.body())));
        } catch (Exception e) {
            System.out.println(resp.body());
        }
        return resp.statusCode() == 200 ? 0 : resp.statusCode() == 429 ? 1 : 2;
    }
}
