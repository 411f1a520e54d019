package dev.sluice.servlet;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** An RFC 9457 problem+json answer (429, or 503 when the store fails closed), written without a JSON library. */
final class ProblemJson {
    private ProblemJson() {
    }

    static void write(HttpServletResponse response, String problemType, int status, String title, String detail,
            String instance, String limitName, long retryAfterSeconds, String degradation) throws IOException {
        StringBuilder json = new StringBuilder(256).append("{\"type\":");
        jsonString(json, problemType).append(",\"title\":");
        jsonString(json, title).append(",\"status\":").append(status).append(",\"detail\":");
        jsonString(json, detail).append(",\"instance\":");
        jsonString(json, instance);
        if (limitName != null) {
            json.append(",\"limit\":");
            jsonString(json, limitName).append(",\"retryAfterSeconds\":").append(retryAfterSeconds);
        }
        if (degradation != null) {
            json.append(",\"degradation\":");
            jsonString(json, degradation);
        }
        json.append('}');
        byte[] body = json.toString().getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.setContentType(RateLimitFilter.PROBLEM_JSON);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    private static StringBuilder jsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
