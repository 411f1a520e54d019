package dev.sluice.server.http;

import dev.sluice.FailureKind;
import dev.sluice.http.HttpProblems;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.FailureLog;
import dev.sluice.server.decision.ServiceException;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place HTTP answers a failed request, by its {@link FailureKind} ({@link HttpProblems}' table): 400 for
 * bad input, 501 for an operation the store or algorithm does not define, 503 with {@code Retry-After: 1} for the
 * store's failures (its problem type names the cause: {@code store-timeout}, …), 500 for an internal failure, which
 * is logged with its stack trace and answered without it, and closes the connection. Every route that decides
 * ({@code /v1/*}, envoy's {@code /json}) answers its failures here.
 */
final class HttpFailures {
    private static final Logger log = LoggerFactory.getLogger(HttpFailures.class);
    private static final Map<String, String> RETRY = Map.of("Retry-After", "1");

    private final DecisionService service;
    private final HttpAnswers answers;

    HttpFailures(DecisionService service, HttpAnswers answers) {
        this.service = service;
        this.answers = answers;
    }

    /** Notes {@code thrown} ({@link FailureLog}) and answers it. */
    void answer(ChannelHandlerContext ctx, boolean keepAlive, Throwable thrown) {
        ServiceException e = FailureLog.noted(service, thrown, log, "http");
        int code = HttpProblems.status(e.kind());
        answers.problem(
                ctx,
                keepAlive && e.kind() != FailureKind.INTERNAL,
                HttpResponseStatus.valueOf(code),
                e.type(),
                e.getMessage(),
                code == 503 ? RETRY : Map.of());
    }
}
