package dev.sluice.servlet;

import dev.sluice.http.JsonText;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/** An RFC 9457 problem+json answer (429, or 503 when the store fails closed), written without a JSON library. */
final class ProblemJson {
    private ProblemJson() {}

    static void write(
            HttpServletResponse response,
            String problemType,
            int status,
            String title,
            String detail,
            String instance,
            @Nullable String limitName,
            long retryAfterSeconds,
            @Nullable String degradation)
            throws IOException {
        StringBuilder json = new StringBuilder(256).append("{\"type\":");
        JsonText.string(json, problemType).append(",\"title\":");
        JsonText.string(json, title).append(",\"status\":").append(status).append(",\"detail\":");
        JsonText.string(json, detail).append(",\"instance\":");
        JsonText.string(json, instance);
        if (limitName != null) {
            json.append(",\"limit\":");
            JsonText.string(json, limitName).append(",\"retryAfterSeconds\":").append(retryAfterSeconds);
        }
        if (degradation != null) {
            json.append(",\"degradation\":");
            JsonText.string(json, degradation);
        }
        json.append('}');
        byte[] body = json.toString().getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.setContentType(RateLimitFilter.PROBLEM_JSON);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
