package dev.sluice.server.log;

import dev.sluice.server.config.Durations;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * How a value of a log event is written: in the words of the command line, not of {@code toString()}. A
 * {@link Duration} as {@code 250ms} or {@code 2s} ({@link Durations#format}, what {@code --store-timeout} accepts,
 * not {@code PT0.25S}), an {@link InetSocketAddress} as {@code 127.0.0.1:8080} or {@code [::1]:8080} (not
 * {@code /127.0.0.1:8080} or {@code localhost/<unresolved>:8080}), an enum as its lower-case name
 * ({@code fail_open}, as {@code --failure-policy} spells it), a collection as its elements joined by commas, an
 * exception as its class and message, a path as itself (a path is an Iterable of its names). Quoting is the encoder's job, not this class's.
 */
final class LogValues {
    private LogValues() {}

    /** {@code value} as text; never throws, whatever the value's {@code toString()} does. */
    static String text(Object value) {
        try {
            return render(value);
        } catch (RuntimeException e) {
            return failed(value, e);
        }
    }

    /** {@code value} as text, a collection as its {@code toString()}; never throws. */
    static String scalarText(Object value) {
        try {
            return scalar(value);
        } catch (RuntimeException e) {
            return failed(value, e);
        }
    }

    private static String failed(Object value, RuntimeException e) {
        return "<" + value.getClass().getName() + ".toString() failed: " + e + ">";
    }

    private static String render(Object value) {
        if (value instanceof Iterable<?> items && !(value instanceof Path)) {
            StringBuilder b = new StringBuilder();
            for (Object item : items) {
                b.append(b.length() == 0 ? "" : ",").append(scalar(item));
            }
            return b.toString();
        }
        return scalar(value);
    }

    private static String scalar(Object value) {
        if (value == null) {
            return "null";
        } else if (value instanceof CharSequence s) {
            return s.toString();
        } else if (value instanceof Duration d) {
            return duration(d);
        } else if (value instanceof InetSocketAddress a) {
            return address(a);
        } else if (value instanceof Enum<?> e) {
            return e.name().toLowerCase(Locale.ROOT);
        }
        return String.valueOf(value); // a Throwable's is "class: message"
    }

    /** {@code 250ms}, {@code 2s}, {@code 90m}: the shortest exact spelling that the CLI accepts. */
    static String duration(Duration d) {
        try {
            return Durations.format(d);
        } catch (ArithmeticException beyondNanos) {
            return d.toSeconds() + "s";
        }
    }

    /** {@code host:port}, the host as an IP address when it was resolved, IPv6 in brackets. */
    static String address(InetSocketAddress a) {
        InetAddress ip = a.getAddress();
        String host = ip != null ? ip.getHostAddress() : a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
