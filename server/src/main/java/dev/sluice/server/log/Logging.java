package dev.sluice.server.log;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * One log stream: everything {@code sluice serve} logs goes through logback to stderr, one event a line, in one
 * format. Sluice's server and HikariCP log through slf4j already, and so do Netty and Lettuce (Netty's logger finds
 * slf4j, grpc-java's shaded Netty too); java.util.logging (grpc-java, pgjdbc) is bridged here
 * ({@link SLF4JBridgeHandler} replaces the root's console handler, and logback.xml's {@code LevelChangePropagator}
 * gives every java.util.logging logger logback's level, so a disabled line costs a level check and nothing more);
 * {@link System.Logger} (sluice-core, which has no dependency, and the JDK) reaches slf4j through
 * slf4j-jdk-platform-logging, a {@code System.LoggerFinder} found on the class path. An uncaught exception, which the
 * JVM would print as a bare stack trace, is logged as an event too.
 */
public final class Logging {
    private static final org.slf4j.Logger log = LoggerFactory.getLogger(Logging.class);

    private Logging() {}

    /** Bridges java.util.logging, sets the format, logs uncaught exceptions. Idempotent. */
    public static void start(LogFormat format) {
        bridgeJavaUtilLogging();
        use(format);
        if (Thread.getDefaultUncaughtExceptionHandler() == null) {
            Thread.setDefaultUncaughtExceptionHandler((thread, e) -> log.atError()
                    .addKeyValue("event", "uncaught_exception")
                    .addKeyValue("thread", thread.getName())
                    .setCause(e)
                    .log());
        }
    }

    /** java.util.logging's records go to slf4j, and only there. */
    static void bridgeJavaUtilLogging() {
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
    }

    /**
     * Every appender of the root logger that writes Sluice's lines (logback.xml's STDERR) writes {@code format} from
     * now on; an appender of one's own configuration ({@code -Dlogback.configurationFile}) with an encoder of its
     * own keeps it.
     */
    static void use(LogFormat format) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        for (Iterator<Appender<ILoggingEvent>> it =
                        context.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders();
                it.hasNext(); ) {
            if (it.next() instanceof OutputStreamAppender<ILoggingEvent> stream
                    && stream.getEncoder() instanceof LineEncoder) {
                Encoder<ILoggingEvent> encoder = format.encoder();
                encoder.setContext(context);
                encoder.start();
                stream.stop();
                stream.setEncoder(encoder);
                stream.start();
            }
        }
    }

    /**
     * {@code --log-level}: each of {@code specs} is {@code LEVEL} (the root logger's) or {@code LOGGER=LEVEL}, a
     * level one of {@code trace debug info warn error off}; a java.util.logging logger follows (the propagator).
     * All are checked before any is applied.
     */
    public static void levels(List<String> specs) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        List<Runnable> changes = new ArrayList<>();
        for (String spec : specs) {
            int eq = spec.lastIndexOf('=');
            String name =
                    eq < 0 ? Logger.ROOT_LOGGER_NAME : spec.substring(0, eq).trim();
            Level level = level(spec, spec.substring(eq + 1).trim());
            if (name.isEmpty()) {
                throw new IllegalArgumentException("--log-level '" + spec + "' names no logger: write LEVEL for "
                        + "the root logger or LOGGER=LEVEL, e.g. --log-level io.lettuce=debug");
            }
            changes.add(() -> context.getLogger(name).setLevel(level));
        }
        changes.forEach(Runnable::run);
    }

    private static Level level(String spec, String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "trace" -> Level.TRACE;
            case "debug" -> Level.DEBUG;
            case "info" -> Level.INFO;
            case "warn", "warning" -> Level.WARN;
            case "error" -> Level.ERROR;
            case "off" -> Level.OFF;
            default ->
                throw new IllegalArgumentException("--log-level '" + spec + "': '" + text + "' is not a level: "
                        + "use trace, debug, info, warn, error or off, as LEVEL or LOGGER=LEVEL");
        };
    }
}
