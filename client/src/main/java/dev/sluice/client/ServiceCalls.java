package dev.sluice.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.store.TimeBudget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP exchange of every call of {@link RemoteRateLimiter} and its {@link RemoteInFlight}: one {@code POST} of a
 * JSON body, bounded by the client's time budget, the answer read as JSON and its failures turned into
 * {@link RemoteRateLimiterException}s (see {@link RemoteRateLimiter}'s <em>Time budget</em>).
 */
final class ServiceCalls {
    static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    /** Null without a token. */
    private final @Nullable String authorization;

    private final Duration budget;
    private final TimeBudget timeBudget;

    ServiceCalls(HttpClient http, @Nullable String authorization, Duration budget) {
        this.http = http;
        this.authorization = authorization;
        this.budget = budget;
        this.timeBudget = TimeBudget.of("timeBudget", budget);
    }

    /**
     * POSTs {@code body} to {@code uri} under the time budget: the answer's JSON for a 200 or 429, null for a 204;
     * anything else fails the future with a {@link RemoteRateLimiterException} saying how.
     */
    CompletableFuture<JsonNode> send(URI uri, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri)
                .timeout(budget)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        CompletableFuture<HttpResponse<String>> exchange =
                http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
        // the JDK's request timeout ends at the response headers: this bounds the whole call, body included
        CompletableFuture<HttpResponse<String>> bounded = timeBudget.bound(
                exchange.copy(),
                timeBudget.deadline(),
                TimeBudget.Patience.NONE,
                f -> f.completeExceptionally(new TimeoutException()));
        return bounded.handle((resp, t) -> {
            if (t != null) {
                Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                if (c instanceof TimeoutException) {
                    exchange.cancel(true);
                }
                if (RemoteRateLimiterException.classify(c) == Degradation.TIMEOUT) {
                    throw RemoteRateLimiterException.noAnswer(
                            "sluice service " + uri + " did not answer within "
                                    + budget.toMillis() + " ms, the client's time budget (" + c
                                    + "): raise timeBudget if "
                                    + "the service is just slow",
                            c);
                }
                throw RemoteRateLimiterException.noAnswer("sluice service " + uri + " could not be reached: " + c, c);
            }
            int status = resp.statusCode();
            if (status == 204) {
                return null;
            }
            JsonNode json;
            try {
                json = JSON.readTree(resp.body());
            } catch (IOException e) {
                throw RemoteRateLimiterException.answered(
                        "sluice service " + uri + " answered " + status + " with a body that is not JSON",
                        status,
                        null);
            }
            if (status == 200 || status == 429) {
                return json;
            }
            throw RemoteRateLimiterException.failure(
                    "sluice service " + uri,
                    status,
                    json.path("type").textValue(),
                    json.path("detail").asText("HTTP " + status));
        });
    }

    /** The decision of an answer of {@code /v1/check}'s shape ({@code /v1/in-flight/acquire} too). */
    static Decision decision(JsonNode json) {
        JsonNode d = json.get("decision");
        if (d == null) {
            throw RemoteRateLimiterException.answered("the service's answer has no decision: " + json, 200, null);
        }
        return new Decision(
                d.get("allowed").asBoolean(),
                d.get("limit").asLong(),
                d.get("remaining").asLong(),
                d.get("retry_after_ns").asLong(),
                d.get("reset_after_ns").asLong(),
                degradation(json.get("degraded")));
    }

    /**
     * The service's {@code "degraded"} label as a {@link Degradation}: absent is NONE; a label this client does not
     * know (a newer service) is still degraded, as STORE_ERROR, rather than silently exact.
     */
    static Degradation degradation(@Nullable JsonNode label) {
        if (label == null || label.isNull()) {
            return Degradation.NONE;
        }
        for (Degradation g : Degradation.values()) {
            if (g != Degradation.NONE && g.label().equals(label.asText())) {
                return g;
            }
        }
        return Degradation.STORE_ERROR;
    }

    /** The future's value, or what it failed with, unwrapped. */
    static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            if (c instanceof IOException io) {
                throw new UncheckedIOException(io);
            }
            throw e;
        }
    }
}
