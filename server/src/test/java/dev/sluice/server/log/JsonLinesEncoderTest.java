package dev.sluice.server.log;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** What {@link JsonLinesEncoder} writes is one JSON object a line that Jackson reads back to the event's fields. */
class JsonLinesEncoderTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final JsonLinesEncoder encoder = new JsonLinesEncoder();

    @Provide
    static Arbitrary<String> text() {
        return LogfmtEncoderTest.text();
    }

    @Provide
    static Arbitrary<String> keys() {
        return LogfmtEncoderTest.keys();
    }

    @Property
    void everyValueReadsBackFromOneLine(
            @ForAll("text") String message,
            @ForAll("keys") String key,
            @ForAll("text") String value,
            @ForAll("text") String cause)
            throws Exception {
        String line = Events.line(
                encoder,
                Events.of(
                        Level.ERROR,
                        "io.grpc.internal.ServerImpl",
                        message,
                        new IllegalStateException(cause),
                        "event",
                        "internal_error",
                        key,
                        value));
        JsonNode read = JSON.readTree(line);
        assertThat(names(read)).containsExactly("time", "level", "logger", "event", key, "msg", "exception");
        assertThat(read.get("time").asText()).isEqualTo("2026-01-02T03:04:05.678Z");
        assertThat(read.get("level").asText()).isEqualTo("ERROR");
        assertThat(read.get("logger").asText()).isEqualTo("io.grpc.internal.ServerImpl");
        assertThat(read.get("event").asText()).isEqualTo("internal_error");
        assertThat(read.get(key).asText()).isEqualTo(value);
        assertThat(read.get("msg").asText()).isEqualTo(message);
        assertThat(read.get("exception").asText())
                .startsWith(IllegalStateException.class.getName() + ": " + cause)
                .contains("\tat dev.sluice.server.log.JsonLinesEncoderTest.everyValueReadsBackFromOneLine");
    }

    @Example
    void numbersBooleansNullAndCollectionsKeepTheirJsonTypes() throws Exception {
        String line = Events.line(
                encoder,
                Events.of(
                        Level.INFO,
                        "dev.sluice.server.cli.ServeCommand",
                        null,
                        null,
                        "event",
                        "started",
                        "rules",
                        7,
                        "suppressed_since_last",
                        12L,
                        "ratio",
                        0.5,
                        "nan",
                        Double.NaN,
                        "leases",
                        true,
                        "nothing",
                        null,
                        "domains",
                        List.of("api", "example"),
                        "store_budget",
                        Duration.ofMillis(250),
                        "http",
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 8080)));
        JsonNode read = JSON.readTree(line);
        assertThat(read.get("rules").isInt()).isTrue();
        assertThat(read.get("rules").asInt()).isEqualTo(7);
        assertThat(read.get("suppressed_since_last").asLong()).isEqualTo(12);
        assertThat(read.get("ratio").asDouble()).isEqualTo(0.5);
        assertThat(read.get("nan").asText()).as("not a JSON number").isEqualTo("NaN");
        assertThat(read.get("leases").isBoolean()).isTrue();
        assertThat(read.get("nothing").isNull()).isTrue();
        assertThat(JSON.convertValue(read.get("domains"), new TypeReference<List<String>>() {}))
                .isEqualTo(List.of("api", "example"));
        assertThat(read.get("store_budget").asText()).isEqualTo("250ms");
        assertThat(read.get("http").asText()).isEqualTo("127.0.0.1:8080");
        assertThat(read.has("msg")).as("no message, no msg").isFalse();
    }

    @Example
    void aCollectionThatFailsWhileWrittenBecomesText() throws Exception {
        Iterable<Object> changing = () -> new Iterator<>() {
            private int read;

            @Override
            public boolean hasNext() {
                return true;
            }

            @Override
            public Object next() {
                if (read++ > 0) {
                    throw new ConcurrentModificationException();
                }
                return "a";
            }
        };
        List<Object> self = new ArrayList<>(List.of("b"));
        self.add(self);
        String line = Events.line(encoder, Events.of(Level.INFO, "x", null, null, "v", changing, "self", self));
        JsonNode read = JSON.readTree(line);
        assertThat(read.get("v").asText()).contains("toString() failed").contains("ConcurrentModificationException");
        assertThat(read.get("self").get(1).asText())
                .as("an element is not read as a collection")
                .isEqualTo("[b, (this Collection)]");
    }

    @Example
    void theSameFieldsInTheSameOrderAsLogfmt() throws Exception {
        var event = Events.of(Level.WARN, "org.postgresql.Driver", "a \"b\" c", null, "msg", 1, "k", "v");
        Map<String, String> logfmt = Logfmt.parse(Events.line(new LogfmtEncoder(), event));
        JsonNode json = JSON.readTree(Events.line(encoder, event));
        assertThat(names(json)).containsExactlyElementsOf(logfmt.keySet());
        logfmt.forEach((k, v) -> assertThat(json.get(k).asText()).as(k).isEqualTo(v));
    }

    private static List<String> names(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
