package dev.sluice.server.envoy;

import dev.sluice.FailureKind;
import dev.sluice.server.decision.ServiceException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * The gRPC status of each {@link FailureKind}, the one place gRPC answers a failure: bad input is
 * {@code INVALID_ARGUMENT}, an unsupported operation {@code UNIMPLEMENTED}, every store failure {@code UNAVAILABLE}
 * (Envoy's {@code failure_mode_deny} then decides, whatever the cause), an internal failure {@code INTERNAL}. The
 * description is {@code <problem type>: <message>}, the same type and message HTTP answers with; an internal
 * failure's says only that the cause is in the log.
 */
public final class GrpcFailures {
    private GrpcFailures() {}

    /** The gRPC status of a failure of this kind. */
    public static Status.Code code(FailureKind kind) {
        return switch (kind) {
            case BAD_REQUEST -> Status.Code.INVALID_ARGUMENT;
            case UNSUPPORTED -> Status.Code.UNIMPLEMENTED;
            case TIMED_OUT, UNAVAILABLE, OVERLOADED, STORE_ERROR, MISCONFIGURED -> Status.Code.UNAVAILABLE;
            case INTERNAL -> Status.Code.INTERNAL;
        };
    }

    /** The status to answer {@code e} with. */
    public static StatusRuntimeException status(ServiceException e) {
        Status status = Status.fromCode(code(e.kind()));
        return (e.kind() == FailureKind.INTERNAL
                        ? status.withDescription(e.getMessage())
                        : status.withDescription(e.type() + ": " + e.getMessage()))
                .asRuntimeException();
    }
}
