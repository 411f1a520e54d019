package dev.sluice.server.http;

import dev.sluice.server.config.ConfigNames;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import org.jspecify.annotations.Nullable;

/**
 * How the HTTP endpoint's event loops talk to the kernel ({@code sluice serve --http-transport}). {@link #AUTO}, the
 * default, takes the first of io_uring, epoll and NIO this machine offers: io_uring hands the kernel a loop's reads
 * and writes in batches, fewer system calls than epoll (measured in bench/server/README.md); epoll where io_uring is
 * missing or turned off (older kernels, containers whose seccomp profile refuses it); NIO elsewhere. A transport
 * named explicitly that this machine cannot give stops the start, with Netty's reason.
 */
public enum HttpTransport {
    AUTO,
    IO_URING,
    EPOLL,
    NIO;

    /** The option's value as written ({@code io_uring}, …). */
    public String configName() {
        return ConfigNames.of(this);
    }

    /**
     * The transport {@code --http-transport} names (any case, as the other options); the message lists the values
     * when it names none.
     */
    public static HttpTransport fromConfigName(String value) {
        HttpTransport t = ConfigNames.find(values(), value);
        if (t != null) {
            return t;
        }
        throw new IllegalArgumentException("--http-transport '" + value
                + "' is not a transport: use auto (the default: io_uring, else epoll, else nio), io_uring, epoll"
                + " or nio");
    }

    /** The transport this one means here: {@link #AUTO} resolved; a named one this machine lacks fails. */
    public HttpTransport resolve() {
        return resolve(
                IoUring.isAvailable() ? null : IoUring.unavailabilityCause(),
                Epoll.isAvailable() ? null : Epoll.unavailabilityCause());
    }

    /**
     * As {@link #resolve()}, given why io_uring and epoll are unavailable ({@code null}: available).
     *
     * @throws IllegalArgumentException when this transport is named and unavailable, naming why and what to use
     */
    HttpTransport resolve(@Nullable Throwable noUring, @Nullable Throwable noEpoll) {
        return switch (this) {
            case AUTO -> noUring == null ? IO_URING : noEpoll == null ? EPOLL : NIO;
            case IO_URING -> available(noUring);
            case EPOLL -> available(noEpoll);
            case NIO -> NIO;
        };
    }

    private HttpTransport available(@Nullable Throwable cause) {
        if (cause == null) {
            return this;
        }
        throw new IllegalArgumentException(
                "--http-transport " + configName() + ": not available on this machine (" + cause
                        + "); use --http-transport auto, which takes the first of io_uring, epoll and nio available",
                cause);
    }

    /** The event loops' I/O for a resolved transport. */
    IoHandlerFactory handlers() {
        return switch (this) {
            case IO_URING -> IoUringIoHandler.newFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
            case AUTO -> throw new IllegalStateException("resolve() first");
        };
    }

    /** The listening channel for a resolved transport. */
    Class<? extends ServerChannel> serverChannel() {
        return switch (this) {
            case IO_URING -> IoUringServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
            case AUTO -> throw new IllegalStateException("resolve() first");
        };
    }
}
