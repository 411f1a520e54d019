package dev.sluice.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * One of the service's endpoints could not bind its address: which one ({@code "http"} or {@code "grpc"}), the
 * address, and whether the address was in use (another process, or another {@code sluice serve}, listens there), so
 * that the command line can name the port and the flag that chose it.
 */
public final class CannotListenException extends IOException {
    private final String endpoint;
    private final InetSocketAddress address;
    private final boolean inUse;

    CannotListenException(String endpoint, InetSocketAddress address, Throwable cause) {
        super(
                endpoint + " cannot listen on " + address.getHostString() + ":" + address.getPort() + ": "
                        + rootMessage(cause),
                cause);
        this.endpoint = endpoint;
        this.address = address;
        this.inUse = inUse(cause);
    }

    /** {@code "http"} or {@code "grpc"}. */
    public String endpoint() {
        return endpoint;
    }

    public InetSocketAddress address() {
        return address;
    }

    /** True when something else listens on the address (EADDRINUSE). */
    public boolean inUse() {
        return inUse;
    }

    /** The innermost cause's message: what the operating system said. */
    public String reason() {
        return rootMessage(Objects.requireNonNull(getCause(), "made with the bind's failure"));
    }

    /**
     * EADDRINUSE reaches Java only as text: the JDK's {@link java.net.BindException} also stands for "cannot assign
     * requested address", and Netty's native transport throws its own IOException, both saying "Address already
     * in use" (the C library's words for the errno).
     */
    private static boolean inUse(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c.getMessage() != null && c.getMessage().contains("Address already in use")) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() != null ? root.getMessage() : root.toString();
    }
}
