package dev.sluice.server.decision;

import dev.sluice.FailureKind;
import dev.sluice.http.HttpProblems;
import org.jspecify.annotations.Nullable;

/**
 * A request the service could not decide: its {@link FailureKind}, which each transport maps in one place (HTTP:
 * {@code server.http.HttpFailures}; gRPC: {@code server.envoy.GrpcFailures}), and a short machine-readable problem
 * type ({@code unknown-domain}, {@code store-timeout}, {@code peek-unsupported}, …) with a message that says what
 * happened and what to do. Bad input is the subclass {@link BadRequestException}. No stack trace: where it was
 * thrown says nothing the message does not; an unexpected cause keeps its own.
 */
public class ServiceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final FailureKind kind;
    private final String type;

    public ServiceException(FailureKind kind, String type, @Nullable String message, @Nullable Throwable cause) {
        super(message, cause, false, false);
        this.kind = kind;
        this.type = type;
    }

    /** A failure of {@code kind} named by the kind's own problem type ({@link HttpProblems#type}). */
    public ServiceException(FailureKind kind, String message, @Nullable Throwable cause) {
        this(kind, HttpProblems.type(kind), message, cause);
    }

    /** What kind of failure this is. */
    public FailureKind kind() {
        return kind;
    }

    /** The problem type, a short slug such as {@code unknown-domain} or {@code store-timeout}. */
    public String type() {
        return type;
    }

    /**
     * What a transport answers for {@code thrown} (looking through {@code CompletionException}s): itself when it is
     * a {@code ServiceException}, else an {@link FailureKind#INTERNAL} failure that keeps it as its cause (for the
     * log) and says nothing of it to the caller.
     */
    public static ServiceException of(Throwable thrown) {
        Throwable t = FailureKind.unwrap(thrown);
        return t instanceof ServiceException s
                ? s
                : new ServiceException(
                        FailureKind.INTERNAL, "the service failed to answer; the cause is in its log", t);
    }
}
