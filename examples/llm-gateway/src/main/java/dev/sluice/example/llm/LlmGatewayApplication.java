package dev.sluice.example.llm;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.sluice.servlet.CostAfter;
import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * An LLM-style gateway: {@code POST /v1/completions} with an {@code X-Api-Key}, limited by Sluice to so many tokens a
 * minute per key (reserved on an estimate, settled on the tokens each response used) and to so many requests in
 * flight per key. The limits are all in {@code application.yml}; the code only reports what each response used: in
 * the {@value #TOKENS_USED} header, and in the request attribute {@value CostAfter#DEFAULT_ATTRIBUTE} for a streamed
 * response, whose headers are gone before its usage is known.
 */
@SpringBootApplication
@RestController
public class LlmGatewayApplication {
    /** The response header reporting the tokens a completion used (prompt and completion). */
    public static final String TOKENS_USED = "X-Tokens-Used";

    private final CompletionModel model;

    public LlmGatewayApplication(CompletionModel model) {
        this.model = model;
    }

    public static void main(String[] args) {
        SpringApplication.run(LlmGatewayApplication.class, args);
    }

    /** The body of a completion request, in OpenAI's words. */
    record CompletionRequest(
            @Nullable String prompt,
            @JsonProperty("max_tokens") @Nullable Integer maxTokens,
            @Nullable Boolean stream) {}

    @PostMapping(path = "/v1/completions", consumes = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<StreamingResponseBody> complete(
            @RequestHeader(name = "X-Api-Key", required = false) @Nullable String apiKey,
            @RequestBody CompletionRequest body,
            HttpServletRequest request) {
        if (apiKey == null || apiKey.isBlank()) { // a request without a key is not limited: refuse it here
            return error(HttpStatus.UNAUTHORIZED, "send your API key in the X-Api-Key header");
        }
        int maxTokens = body.maxTokens() == null ? 100 : body.maxTokens();
        if (maxTokens < 1 || maxTokens > 4000) {
            return error(HttpStatus.BAD_REQUEST, "max_tokens " + maxTokens + ": use 1 to 4000");
        }
        String id = "cmpl-" + UUID.randomUUID();
        if (Boolean.TRUE.equals(body.stream())) {
            StreamingResponseBody events = out -> {
                CompletionModel.Completion c = model.complete(body.prompt() == null ? "" : body.prompt(), maxTokens);
                for (String word : c.text().split(" ", -1)) {
                    out.write(("data: {\"id\":\"" + id + "\",\"text\":\"" + json(word + " ") + "\"}\n\n")
                            .getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
                // known only now, long after the headers went out: the filter reads it when the stream ends
                request.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, c.totalTokens());
                out.write(("data: {\"usage\":" + usage(c) + "}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8));
            };
            return ResponseEntity.ok().contentType(MediaType.TEXT_EVENT_STREAM).body(events);
        }
        CompletionModel.Completion c = model.complete(body.prompt() == null ? "" : body.prompt(), maxTokens);
        byte[] json = ("{\"id\":\"" + id + "\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\""
                        + json(c.text()) + "\",\"finish_reason\":\"length\"}],\"usage\":" + usage(c) + "}")
                .getBytes(StandardCharsets.UTF_8);
        return ResponseEntity.ok()
                .contentType(MediaType.APPLICATION_JSON)
                .header(TOKENS_USED, Integer.toString(c.totalTokens())) // known before the body: a header will do
                .body(out -> out.write(json));
    }

    private static ResponseEntity<StreamingResponseBody> error(HttpStatus status, String message) {
        byte[] json = ("{\"error\":\"" + json(message) + "\"}").getBytes(StandardCharsets.UTF_8);
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_JSON)
                .body(out -> out.write(json));
    }

    private static String usage(CompletionModel.Completion c) {
        return "{\"prompt_tokens\":" + c.promptTokens() + ",\"completion_tokens\":" + c.completionTokens()
                + ",\"total_tokens\":" + c.totalTokens() + "}";
    }

    private static String json(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
