package dev.sluice.spring;

import dev.sluice.http.RateLimitFields;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Spring MVC: answers a {@link RateLimitExceededException} thrown by a controller (or anything it calls) with the
 * filter's {@code 429}. Ordered early, so that an application's catch-all {@code @ExceptionHandler(Exception.class)}
 * does not turn it into a 500; to answer it differently, handle it in the controller, or in an advice of your own
 * ordered before this one ({@code @Order(Ordered.HIGHEST_PRECEDENCE)}).
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE + 100)
class RateLimitExceededMvcHandler {
    private final String problemType;

    RateLimitExceededMvcHandler(String problemType) {
        this.problemType = problemType;
    }

    @ExceptionHandler(RateLimitExceededException.class)
    public ResponseEntity<byte[]> rateLimitExceeded(
            RateLimitExceededException e, HttpServletRequest request, HttpServletResponse response) {
        RateLimitProblem p = RateLimitProblem.of(e, problemType, path(request));
        // set on the response, replacing the filter's RateLimit of the request's own (allowed) rules: a 429's
        // fields describe the limit that denied
        response.setHeader(RateLimitFields.POLICY, p.policy());
        response.setHeader(RateLimitFields.STATE, p.state());
        response.setHeader(RateLimitFields.RETRY_AFTER, Long.toString(p.retryAfterSeconds()));
        return ResponseEntity.status(RateLimitProblem.STATUS)
                .header("Content-Type", RateLimitProblem.CONTENT_TYPE)
                .body(p.body());
    }

    /** The path inside the application, as the filter's {@code instance}. */
    private static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String info = request.getPathInfo();
        String p = info == null ? servletPath : servletPath == null ? info : servletPath + info;
        return p == null || p.isEmpty() ? "/" : p;
    }
}
