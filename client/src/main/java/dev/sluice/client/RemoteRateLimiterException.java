package dev.sluice.client;

import dev.sluice.Degradation;
import dev.sluice.FailureKind;
import dev.sluice.StoreException;
import dev.sluice.http.HttpProblems;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The decision service could not decide: it was not reached, did not answer within the client's time budget, or
 * answered with an error. To a {@link dev.sluice.failsafe.FailSafeRateLimiter} the service is a remote store like Redis, so
 * {@link #degradation()} classifies the failure the same way:
 * <ul>
 *   <li>{@code TIMEOUT} — no answer within the budget (connect included), or 504 from a proxy in between;</li>
 *   <li>{@code UNAVAILABLE} — connection refused or reset, name not resolved, 502, or a 503 without a store cause;</li>
 *   <li>a 503 whose problem type is {@code store-timeout}, {@code store-unavailable}, {@code store-overloaded},
 *       {@code store-error} or {@code store-misconfigured} keeps the service's own cause: the service's store failed
 *       that way;</li>
 *   <li>{@code MISCONFIGURED} — 401 or 403: the service refused this client's token;</li>
 *   <li>{@code STORE_ERROR} — any other answer that is not a decision (500, a body that is not JSON).</li>
 * </ul>
 * The answer is decoded by its status and problem type ({@link HttpProblems#kindOf}), never by its message: a 400
 * is thrown as {@link IllegalArgumentException} and a 501 as {@link UnsupportedOperationException}, as a store
 * would throw them ({@link #failure}).
 * {@link #httpStatus()} is the status answered (0 when there was no answer) and {@link #problemType()} the
 * problem's type without its {@code urn:sluice:problem:} prefix (null when there was none).
 */
public final class RemoteRateLimiterException extends StoreException {
    private static final long serialVersionUID = 1L;
    private final int httpStatus;
    private final @Nullable String problemType;

    RemoteRateLimiterException(
            String message,
            @Nullable Throwable cause,
            Degradation degradation,
            int httpStatus,
            @Nullable String problemType) {
        super(message, cause, degradation);
        this.httpStatus = httpStatus;
        this.problemType = problemType;
    }

    /** The service was not reached or did not answer: classified by the I/O failure. */
    static RemoteRateLimiterException noAnswer(String message, Throwable cause) {
        return new RemoteRateLimiterException(message, cause, classify(cause), 0, null);
    }

    /** The service answered {@code status} with a problem of {@code type} (the full URN, or null). */
    static RemoteRateLimiterException answered(String message, int status, @Nullable String type) {
        String t = type != null && type.startsWith(HttpProblems.TYPE_PREFIX)
                ? type.substring(HttpProblems.TYPE_PREFIX.length())
                : type;
        Degradation cause = HttpProblems.kindOf(status, t).degradation();
        return new RemoteRateLimiterException(
                message, null, cause == null ? Degradation.STORE_ERROR : cause, status, t);
    }

    /**
     * What to throw for the service's answer that is no decision, by its {@link FailureKind}: bad input is an
     * {@link IllegalArgumentException}, an unsupported operation an {@link UnsupportedOperationException} (with the
     * service's detail, as the store would throw them), anything else this exception.
     *
     * @param service names the service ({@code sluice service http://…}) for the message
     * @param type the problem's type as answered, null when it had none
     */
    static RuntimeException failure(String service, int status, @Nullable String type, String detail) {
        return switch (HttpProblems.kindOf(status, type)) {
            case BAD_REQUEST -> new IllegalArgumentException(detail);
            case UNSUPPORTED -> new UnsupportedOperationException(detail);
            default -> answered(service + " answered " + status + ": " + detail, status, type);
        };
    }

    static Degradation classify(Throwable t) {
        // HttpConnectTimeoutException is an HttpTimeoutException: no connection within the budget is a timeout
        if (t instanceof HttpTimeoutException || t instanceof TimeoutException || t instanceof SocketTimeoutException) {
            return Degradation.TIMEOUT;
        }
        if (t instanceof ConnectException && t.getCause() instanceof HttpConnectTimeoutException) {
            return Degradation.TIMEOUT;
        }
        if (t instanceof IOException || t instanceof UnresolvedAddressException || t instanceof UnknownHostException) {
            return Degradation.UNAVAILABLE; // refused, reset, closed, not resolved
        }
        return Degradation.STORE_ERROR;
    }

    /** The HTTP status the service answered, or 0 when it did not answer. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The problem type answered ({@code store-timeout}, …), or null. */
    public @Nullable String problemType() {
        return problemType;
    }
}
