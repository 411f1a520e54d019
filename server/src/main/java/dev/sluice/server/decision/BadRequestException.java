package dev.sluice.server.decision;

import dev.sluice.FailureKind;
import dev.sluice.server.config.Messages;
import org.jspecify.annotations.Nullable;

/**
 * A request the service refuses ({@link FailureKind#BAD_REQUEST}), with a short machine-readable problem type
 * ({@code unknown-domain}, {@code invalid-hits}, …) and a message naming the bad value. HTTP answers it with 400 and
 * an {@code application/problem+json} body; gRPC with {@code INVALID_ARGUMENT}.
 */
public final class BadRequestException extends ServiceException {
    private static final long serialVersionUID = 1L;

    public BadRequestException(String type, @Nullable String message) {
        // a message quotes the input, it does not copy it
        super(FailureKind.BAD_REQUEST, type, message == null ? null : Messages.abbreviateQuoted(message), null);
    }
}
