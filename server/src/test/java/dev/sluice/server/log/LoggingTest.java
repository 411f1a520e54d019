package dev.sluice.server.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The one log stream in this JVM, configured by the server's logback.xml as {@code sluice serve} is: a
 * java.util.logging record (grpc-java, pgjdbc) and a {@link System.Logger} line (sluice-core) are written by the same
 * encoder as an slf4j event, in the format chosen, and java.util.logging's levels follow logback's.
 */
class LoggingTest {

    @AfterEach
    void backToTheDefault() {
        Logging.start(LogFormat.LOGFMT);
    }

    @Test
    void javaUtilLoggingAndSystemLoggerLinesAreWrittenAsLogfmt() {
        Logging.start(LogFormat.LOGFMT);
        List<String> lines = stderrOf(() -> {
            java.util.logging.Logger.getLogger("dev.sluice.test.jul").warning("from \"JUL\"");
            System.getLogger("dev.sluice.test.platform").log(System.Logger.Level.WARNING, "from {0}", "System.Logger");
            LoggerFactory.getLogger("dev.sluice.test.slf4j")
                    .atWarn()
                    .addKeyValue("event", "from_slf4j")
                    .log();
        });
        assertThat(lines).hasSize(3);
        Map<String, String> jul = Logfmt.parse(lines.get(0));
        assertThat(jul)
                .containsEntry("level", "WARN")
                .containsEntry("logger", "dev.sluice.test.jul")
                .containsEntry("msg", "from \"JUL\"");
        Map<String, String> platform = Logfmt.parse(lines.get(1));
        assertThat(platform)
                .containsEntry("level", "WARN")
                .containsEntry("logger", "dev.sluice.test.platform")
                .containsEntry("msg", "from System.Logger");
        assertThat(Logfmt.parse(lines.get(2)))
                .containsEntry("event", "from_slf4j")
                .doesNotContainKey("msg");
    }

    @Test
    void jsonIsChosenForEveryLineWhateverLoggedIt() throws Exception {
        Logging.start(LogFormat.JSON);
        List<String> lines = stderrOf(() -> {
            java.util.logging.Logger.getLogger("dev.sluice.test.jul").severe("line one\nline two");
            System.getLogger("dev.sluice.test.platform")
                    .log(System.Logger.Level.ERROR, "boom", new IllegalStateException("cause"));
        });
        assertThat(lines).hasSize(2);
        ObjectMapper json = new ObjectMapper();
        JsonNode jul = json.readTree(lines.get(0));
        assertThat(jul.get("level").asText()).isEqualTo("ERROR");
        assertThat(jul.get("msg").asText()).isEqualTo("line one\nline two");
        JsonNode platform = json.readTree(lines.get(1));
        assertThat(platform.get("exception").asText()).startsWith("java.lang.IllegalStateException: cause\n\tat ");
    }

    @Test
    void anAppenderOfOnesOwnConfigurationKeepsItsEncoder() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        PatternLayoutEncoder pattern = new PatternLayoutEncoder();
        pattern.setContext(context);
        pattern.setPattern("%msg%n");
        pattern.start();
        OutputStreamAppender<ILoggingEvent> own = new OutputStreamAppender<>();
        own.setContext(context);
        own.setEncoder(pattern);
        own.setOutputStream(new ByteArrayOutputStream());
        own.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(own);
        try {
            Logging.start(LogFormat.JSON);
            assertThat(own.getEncoder()).isSameAs(pattern);
            assertThat(((OutputStreamAppender<ILoggingEvent>) root.getAppender("STDERR")).getEncoder())
                    .isInstanceOf(JsonLinesEncoder.class);
        } finally {
            root.detachAppender(own);
            own.stop();
        }
    }

    @Test
    void javaUtilLoggingFollowsLogbacksLevels() {
        Logging.start(LogFormat.LOGFMT);
        java.util.logging.Logger grpc = java.util.logging.Logger.getLogger("io.grpc.internal.SomeGrpcClass");
        assertThat(grpc.isLoggable(Level.FINE))
                .as("io.grpc is at WARN in logback.xml")
                .isFalse();
        assertThat(grpc.isLoggable(Level.WARNING)).isTrue();
        try {
            Logging.levels(List.of("io.grpc=debug"));
            assertThat(grpc.isLoggable(Level.FINE)).isTrue();
            assertThat(grpc.isLoggable(Level.FINER)).as("trace").isFalse();
        } finally {
            Logging.levels(List.of("io.grpc=warn"));
        }
        assertThat(grpc.isLoggable(Level.FINE)).isFalse();
    }

    @Test
    void aBadLevelIsRefusedNamingItAndChangesNothing() {
        assertThatThrownBy(() -> Logging.levels(List.of("dev.sluice.test.a=debug", "dev.sluice.test.b=loud")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--log-level 'dev.sluice.test.b=loud': 'loud' is not a level: use trace, debug, info, "
                        + "warn, error or off, as LEVEL or LOGGER=LEVEL");
        assertThat(((Logger) LoggerFactory.getLogger("dev.sluice.test.a")).getLevel())
                .as("not applied")
                .isNull();
        assertThatThrownBy(() -> Logging.levels(List.of("=debug"))).hasMessageContaining("names no logger");
    }

    @Test
    void aFormatIsLogfmtTextOrJson() {
        assertThat(LogFormat.parse("--log-format", null)).isEqualTo(LogFormat.LOGFMT);
        assertThat(LogFormat.parse("--log-format", "text"))
                .as("envoy's LOG_FORMAT word")
                .isEqualTo(LogFormat.LOGFMT);
        assertThat(LogFormat.parse("--log-format", " JSON ")).isEqualTo(LogFormat.JSON);
        assertThatThrownBy(() -> LogFormat.parse("--log-format", "xml"))
                .hasMessage("--log-format 'xml' is unknown: use logfmt (the default) or json");
    }

    /** The lines {@code action} writes to stderr, where logback.xml's appender writes. */
    private static List<String> stderrOf(Runnable action) {
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(stderr);
        }
        return captured.toString(StandardCharsets.UTF_8).lines().toList();
    }
}
