package dev.sluice.server.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import ch.qos.logback.classic.Level;
import dev.sluice.failsafe.FailurePolicy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * What {@link LogfmtEncoder} writes reads back, with {@link Logfmt} (a reader written apart from the encoder), to
 * exactly the event's fields, whatever the values hold; and a value is written in the command line's words.
 */
class LogfmtEncoderTest {
    private final LogfmtEncoder encoder = new LogfmtEncoder();

    /** Any text: every char (lone surrogates too), and strings made of what logfmt must escape. */
    @Provide
    static Arbitrary<String> text() {
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(30),
                Arbitraries.strings()
                        .withChars("\"\\= \n\r\t\u0000\u0007\u001f\u007f\u0085\u2028\u2029\ud83d\ude00"
                                + "\ud800\udc00éß中{}'ab")
                        .ofMaxLength(30));
    }

    /** Keys as Sluice writes them. */
    @Provide
    static Arbitrary<String> keys() {
        return Arbitraries.strings()
                .withCharRange('a', 'z')
                .withChars("_.-0123456789")
                .ofMinLength(1)
                .ofMaxLength(12)
                .filter(k -> !List.of("time", "level", "logger", "msg", "exception", "event")
                        .contains(k));
    }

    @Property
    void everyValueReadsBackFromOneLine(
            @ForAll("text") String message,
            @ForAll("keys") String key,
            @ForAll("text") String value,
            @ForAll("text") String cause) {
        String line = Events.line(
                encoder,
                Events.of(
                        Level.WARN,
                        "io.lettuce.core.protocol.ConnectionWatchdog",
                        message,
                        new IllegalStateException(cause),
                        "event",
                        "store_unavailable",
                        key,
                        value));
        Map<String, String> read = Logfmt.parse(line);
        assertThat(read)
                .containsExactly(
                        entry("time", "2026-01-02T03:04:05.678Z"),
                        entry("level", "WARN"),
                        entry("logger", "io.lettuce.core.protocol.ConnectionWatchdog"),
                        entry("event", "store_unavailable"),
                        entry(key, value),
                        entry("msg", message),
                        entry("exception", read.get("exception")));
        assertThat(read.get("exception"))
                .startsWith(IllegalStateException.class.getName() + ": " + cause)
                .contains("\tat dev.sluice.server.log.LogfmtEncoderTest.everyValueReadsBackFromOneLine");
    }

    @Example
    void quotesInAValueAreEscapedNotClosed() {
        String line = Events.line(
                encoder,
                Events.of(
                        Level.WARN,
                        "dev.sluice.server.cli.Stores",
                        null,
                        null,
                        "cause",
                        "password authentication failed for user \"sluice\""));
        assertThat(line).endsWith(" cause=\"password authentication failed for user \\\"sluice\\\"\"");
        assertThat(Logfmt.parse(line)).containsEntry("cause", "password authentication failed for user \"sluice\"");
    }

    @Example
    void aBareValueIsPrintableAsciiWithoutSpaceEqualsQuoteOrBackslash() {
        String line = Events.line(
                encoder,
                Events.of(
                        Level.INFO,
                        "x",
                        null,
                        null,
                        "plain",
                        "redis+leases",
                        "space",
                        "a b",
                        "equals",
                        "a=b",
                        "backslash",
                        "C:\\x",
                        "empty",
                        "",
                        "accent",
                        "é",
                        "newline",
                        "a\nb"));
        assertThat(line)
                .endsWith(" plain=redis+leases space=\"a b\" equals=\"a=b\" backslash=\"C:\\\\x\" empty=\"\" "
                        + "accent=\"é\" newline=\"a\\nb\"");
    }

    @Example
    void durationsAddressesAndPoliciesInTheCommandLinesWords() throws Exception {
        String line = Events.line(
                encoder,
                Events.of(
                        Level.INFO,
                        "dev.sluice.server.cli.ServeCommand",
                        null,
                        null,
                        "event",
                        "started",
                        "store_budget",
                        Duration.ofMillis(250),
                        "grace",
                        Duration.ofSeconds(2),
                        "window",
                        Duration.ofMinutes(90),
                        "http",
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 8080),
                        "redis",
                        InetSocketAddress.createUnresolved("127.0.0.1", 1),
                        "v6",
                        new InetSocketAddress(
                                InetAddress.getByAddress(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}),
                                8081),
                        "grpc",
                        "off",
                        "failure_policy",
                        FailurePolicy.FAIL_OPEN,
                        "domains",
                        List.of("api", "example"),
                        "rules",
                        7,
                        "nothing",
                        null));
        assertThat(Logfmt.parse(line))
                .containsAllEntriesOf(Map.of(
                        "store_budget",
                        "250ms",
                        "grace",
                        "2s",
                        "window",
                        "90m",
                        "http",
                        "127.0.0.1:8080",
                        "redis",
                        "127.0.0.1:1",
                        "v6",
                        "[0:0:0:0:0:0:0:1]:8081",
                        "grpc",
                        "off",
                        "failure_policy",
                        "fail_open",
                        "domains",
                        "api,example",
                        "rules",
                        "7"))
                .containsEntry("nothing", "null");
    }

    @Example
    void keysAreSafeAndNeverRepeatAFixedField() {
        String line = Events.line(
                encoder,
                Events.of(Level.INFO, "x", "text", null, "msg", "kv", "level", "kv", "a b=\"c\"", 1, "", 2, "é", 3));
        assertThat(Logfmt.parse(line))
                .containsExactly(
                        entry("time", "2026-01-02T03:04:05.678Z"),
                        entry("level", "INFO"),
                        entry("logger", "x"),
                        entry("_msg", "kv"),
                        entry("_level", "kv"),
                        entry("a_b__c_", "1"),
                        entry("_", "2"),
                        entry("__", "3"),
                        entry("msg", "text"));
    }

    @Example
    void aValueWhoseToStringThrowsIsStillALine() {
        Object hostile = new Object() {
            @Override
            public String toString() {
                throw new IllegalStateException("no");
            }
        };
        String line = Events.line(encoder, Events.of(Level.INFO, "x", null, null, "v", hostile));
        assertThat(Logfmt.parse(line).get("v")).contains("toString() failed").contains("IllegalStateException: no");
    }
}
