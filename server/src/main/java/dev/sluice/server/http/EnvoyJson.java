package dev.sluice.server.http;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.sluice.server.decision.BadRequestException;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The JSON of envoy's {@code POST /json}: a {@link RateLimitRequest} in, a {@link RateLimitResponse} out, both in
 * protobuf's JSON mapping as envoyproxy/ratelimit reads and writes them with Go's {@code protojson}.
 *
 * <p>Reading is as strict as {@code protojson.Unmarshal}: field names in lowerCamelCase or as in the .proto
 * ({@code hitsAddend} or {@code hits_addend}), unknown fields refused, a string only where the field is a string
 * (protobuf-java's {@code JsonFormat} alone would take {@code "domain": 5}), a field given twice refused (also under
 * its two names), numbers as numbers or strings, enums by name or number, {@code null} meaning unset. The body is first
 * read by the same bounded Jackson reader as {@code /v1/check} (nesting, number and string lengths, duplicate keys,
 * nothing after the value), then checked against the message's descriptor so that a refusal names the field by its
 * path ({@code descriptors[0].entries[1].key}), then mapped by {@code JsonFormat}.
 *
 * <p>Writing is {@code JsonFormat.printer().omittingInsignificantWhitespace()}: lowerCamelCase, fields at their
 * default omitted, enums by name, durations as {@code "1s"}, like {@code protojson.Marshal} (which, unlike this, varies
 * its whitespace on purpose; clients must not compare the text).
 */
final class EnvoyJson {
    private static final ObjectReader READER =
            CheckJson.MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final JsonFormat.Parser PARSER = JsonFormat.parser();
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();
    private static final String MESSAGE = "envoy.service.ratelimit.v3.RateLimitRequest";

    private EnvoyJson() {}

    /** Reads a request body; throws {@link BadRequestException} naming what is wrong. */
    static RateLimitRequest parse(InputStream body) {
        JsonNode root = CheckJson.tree(
                READER,
                body,
                "send an " + MESSAGE + " as JSON, e.g. "
                        + "{\"domain\":\"dummy\",\"descriptors\":[{\"entries\":[{\"key\":\"perday\"}]}]}");
        if (!root.isObject()) {
            throw new BadRequestException(
                    "invalid-type", "the body must be a JSON object (an " + MESSAGE + "), not " + CheckJson.kind(root));
        }
        message(root, RateLimitRequest.getDescriptor(), "");
        RateLimitRequest.Builder b = RateLimitRequest.newBuilder();
        try {
            PARSER.merge(root.toString(), b);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            // what the descriptor walk leaves to JsonFormat: numbers out of range or not whole, unknown enum names,
            // malformed durations, one field under both of its names
            throw new BadRequestException(
                    "invalid-request", "the body is not a valid " + MESSAGE + ": " + e.getMessage());
        }
        return b.build();
    }

    /** The answer's body. */
    static byte[] print(RateLimitResponse response) throws InvalidProtocolBufferException {
        return PRINTER.print(response).getBytes(StandardCharsets.UTF_8);
    }

    /** Checks an object against a message type: every field known, every value of the JSON kind the field takes. */
    private static void message(JsonNode n, Descriptor type, String at) {
        for (Map.Entry<String, JsonNode> f : n.properties()) {
            FieldDescriptor fd = field(type, f.getKey());
            String path = at.isEmpty() ? f.getKey() : at + "." + f.getKey();
            if (fd == null) {
                throw new BadRequestException(
                        "unknown-field",
                        "unknown field '" + f.getKey() + "' in " + (at.isEmpty() ? "the body" : at) + " ("
                                + type.getName() + "): expected " + names(type));
            }
            JsonNode v = f.getValue();
            if (v.isNull()) {
                continue; // unset, as protojson reads it
            }
            if (fd.isMapField()) {
                if (!v.isObject()) {
                    throw new BadRequestException(
                            "invalid-type", path + " must be a JSON object, not " + CheckJson.kind(v));
                }
            } else if (fd.isRepeated()) {
                if (!v.isArray()) {
                    throw new BadRequestException("invalid-type", path + " must be a list, not " + CheckJson.kind(v));
                }
                for (int i = 0; i < v.size(); i++) {
                    value(v.get(i), fd, path + "[" + i + "]");
                }
            } else {
                value(v, fd, path);
            }
        }
    }

    private static void value(JsonNode v, FieldDescriptor fd, String path) {
        switch (fd.getJavaType()) {
            case STRING -> expect(v.isTextual(), v, path, "a string");
            case BOOLEAN -> expect(v.isBoolean(), v, path, "true or false");
            case INT, LONG, FLOAT, DOUBLE -> expect(v.isNumber() || v.isTextual(), v, path, "a number");
            case ENUM ->
                expect(
                        v.isTextual() || v.isIntegralNumber(),
                        v,
                        path,
                        "one of "
                                + fd.getEnumType().getValues().stream()
                                        .map(e -> e.getName())
                                        .toList());
            case BYTE_STRING -> expect(v.isTextual(), v, path, "a base64 string");
            case MESSAGE -> {
                Descriptor m = fd.getMessageType();
                switch (m.getFullName()) {
                    case "google.protobuf.UInt64Value",
                            "google.protobuf.UInt32Value",
                            "google.protobuf.Int64Value",
                            "google.protobuf.Int32Value",
                            "google.protobuf.DoubleValue",
                            "google.protobuf.FloatValue" -> expect(v.isNumber() || v.isTextual(), v, path, "a number");
                    case "google.protobuf.StringValue",
                            "google.protobuf.BytesValue",
                            "google.protobuf.Duration",
                            "google.protobuf.Timestamp",
                            "google.protobuf.FieldMask" -> expect(v.isTextual(), v, path, "a string");
                    case "google.protobuf.BoolValue" -> expect(v.isBoolean(), v, path, "true or false");
                    case "google.protobuf.Value" -> {
                        // any JSON value
                    }
                    case "google.protobuf.Struct", "google.protobuf.Any" ->
                        expect(v.isObject(), v, path, "a JSON object");
                    case "google.protobuf.ListValue" -> expect(v.isArray(), v, path, "a list");
                    default -> {
                        expect(v.isObject(), v, path, "a JSON object");
                        message(v, m, path);
                    }
                }
            }
        }
    }

    private static void expect(boolean ok, JsonNode v, String path, String what) {
        if (!ok) {
            throw new BadRequestException(
                    "invalid-type",
                    path + " must be " + what + ", not " + CheckJson.kind(v)
                            + (v.isValueNode() && !v.isNull() ? " (" + v + ")" : ""));
        }
    }

    /** The field named {@code name} in lowerCamelCase or as in the .proto, as protojson reads either. */
    private static @Nullable FieldDescriptor field(Descriptor type, String name) {
        FieldDescriptor fd = type.findFieldByName(name);
        if (fd != null) {
            return fd;
        }
        for (FieldDescriptor f : type.getFields()) {
            if (f.getJsonName().equals(name)) {
                return f;
            }
        }
        return null;
    }

    private static String names(Descriptor type) {
        List<String> names = new ArrayList<>();
        for (FieldDescriptor f : type.getFields()) {
            names.add(f.getJsonName().equals(f.getName()) ? f.getName() : f.getJsonName() + " (" + f.getName() + ")");
        }
        return String.join(", ", names);
    }
}
