package dev.sluice.server.decision;

import org.slf4j.Logger;

/**
 * What the service notes of a failure it answers, whatever the transport: a refusal (bad request, unsupported) is
 * counted by its problem type, a store failure logged as {@code store_unavailable} (throttled), an internal failure
 * logged with its stack trace as {@code internal_error}. Each transport calls {@link #noted} once per failed
 * request, then maps the {@link ServiceException#kind()} to its own answer.
 */
public final class FailureLog {
    private FailureLog() {}

    /**
     * Notes {@code thrown} (looking through {@code CompletionException}s) and returns what to answer
     * ({@link ServiceException#of}).
     *
     * @param log the transport's logger
     * @param protocol {@code http} or {@code grpc}, for the log line
     */
    public static ServiceException noted(DecisionService service, Throwable thrown, Logger log, String protocol) {
        ServiceException e = ServiceException.of(thrown);
        switch (e.kind()) {
            case BAD_REQUEST, UNSUPPORTED -> service.metrics().rejected(e.type());
            case INTERNAL ->
                log.atError()
                        .addKeyValue("event", "internal_error")
                        .addKeyValue("protocol", protocol)
                        .setCause(e.getCause() != null ? e.getCause() : e)
                        .log();
            case TIMED_OUT, UNAVAILABLE, OVERLOADED, STORE_ERROR, MISCONFIGURED -> {
                if (service.logThrottle().allow(e.type())) {
                    log.atWarn()
                            .addKeyValue("event", "store_unavailable")
                            .addKeyValue("protocol", protocol)
                            .addKeyValue("type", e.type())
                            .addKeyValue("detail", e.getMessage())
                            .addKeyValue(
                                    "suppressed_since_last",
                                    service.logThrottle().suppressedSinceLast())
                            .log();
                }
            }
        }
        return e;
    }
}
