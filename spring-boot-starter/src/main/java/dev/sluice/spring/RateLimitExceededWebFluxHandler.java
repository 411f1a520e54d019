package dev.sluice.spring;

import dev.sluice.http.RateLimitFields;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Spring WebFlux: answers a {@link RateLimitExceededException} (from an annotated controller, a functional route or
 * anything they call) with the filter's {@code 429}, before Spring Boot's error handler (order -1) renders it as a
 * 500. An {@code @ExceptionHandler} of the application's sees it first.
 */
class RateLimitExceededWebFluxHandler implements WebExceptionHandler, Ordered {
    private final String problemType;

    RateLimitExceededWebFluxHandler(String problemType) {
        this.problemType = problemType;
    }

    @Override
    public int getOrder() {
        return -2;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        Throwable t = ex;
        while (t != null && !(t instanceof RateLimitExceededException) && t.getCause() != t) {
            t = t.getCause();
        }
        ServerHttpResponse response = exchange.getResponse();
        if (!(t instanceof RateLimitExceededException e) || response.isCommitted()) {
            return Mono.error(ex);
        }
        RateLimitProblem p = RateLimitProblem.of(
                e,
                problemType,
                exchange.getRequest().getPath().pathWithinApplication().value());
        response.setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
        HttpHeaders h = response.getHeaders();
        h.set(RateLimitFields.POLICY, p.policy());
        h.set(RateLimitFields.STATE, p.state());
        h.set(RateLimitFields.RETRY_AFTER, Long.toString(p.retryAfterSeconds()));
        h.set(HttpHeaders.CONTENT_TYPE, RateLimitProblem.CONTENT_TYPE);
        byte[] body = p.body();
        h.setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
