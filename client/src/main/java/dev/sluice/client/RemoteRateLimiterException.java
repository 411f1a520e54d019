package dev.sluice.client;

import dev.sluice.Degradation;
import dev.sluice.StoreException;
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
 *   <li>a 503 whose problem type is {@code store-timeout}, {@code store-unavailable}, {@code store-overloaded} or
 *       {@code store-error} keeps the service's own cause: the service's store failed that way;</li>
 *   <li>{@code STORE_ERROR} — any other answer that is not a decision (500, 401, a body that is not JSON).</li>
 * </ul>
 * {@link #httpStatus()} is the status answered (0 when there was no answer) and {@link #problemType()} the
 * problem's type without its {@code urn:sluice:problem:} prefix (null when there was none).
 */
public final class RemoteRateLimiterException extends StoreException {
    private static final long serialVersionUID = 1L;
    private static final String PROBLEM_PREFIX = "urn:sluice:problem:";

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
        String t = type != null && type.startsWith(PROBLEM_PREFIX) ? type.substring(PROBLEM_PREFIX.length()) : type;
        return new RemoteRateLimiterException(message, null, classify(status, t), status, t);
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

    static Degradation classify(int status, @Nullable String problemType) {
        if (status == 503 && problemType != null) {
            return switch (problemType) {
                case "store-timeout" -> Degradation.TIMEOUT;
                case "store-overloaded" -> Degradation.OVERLOADED;
                case "store-error" -> Degradation.STORE_ERROR;
                default -> Degradation.UNAVAILABLE;
            };
        }
        if (status == 504) {
            return Degradation.TIMEOUT;
        }
        if (status == 502 || status == 503) {
            return Degradation.UNAVAILABLE;
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
