package dev.sluice.server.decision;

import dev.sluice.server.config.Messages;
import org.jspecify.annotations.Nullable;

/**
 * A request the service refuses, with a short machine-readable problem type ({@code unknown-domain},
 * {@code invalid-hits}, …) and a message naming the bad value. HTTP answers it with 400 and an
 * {@code application/problem+json} body; gRPC with {@code INVALID_ARGUMENT}.
 */
public final class BadRequestException extends RuntimeException {
    private final String type;

    public BadRequestException(String type, @Nullable String message) {
        super(
                message == null ? null : Messages.abbreviateQuoted(message),
                null,
                false,
                false); // a message quotes the input, it does not copy it
        this.type = type;
    }

    /** The problem type, a short slug such as {@code unknown-domain}. */
    public String type() {
        return type;
    }
}
