package dev.sluice.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Decision;
import dev.sluice.Settlement;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.InFlight;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayInputStream;
import java.util.Set;

/**
 * The JSON of work in flight ({@link InFlight}):
 *
 * <pre>
 * POST /v1/in-flight/acquire {"domain": "api", "key": "tenant-7", "max_in_flight": 6, "holder": "req-1",
 *                             "lease_ns": 30000000000}
 *   answer 200 / 429         {"overall_code": "OK", "decision": {"allowed": true, "limit": 6, "remaining": 5,
 *                             "retry_after_ns": 0, "reset_after_ns": 30000000000}}    with "degraded" when a
 *                             failure policy answered; 429 with Retry-After (the earliest lease's end)
 * POST /v1/in-flight/release {"domain": "api", "key": "tenant-7", "holder": "req-1"}
 * POST /v1/in-flight/renew   {"domain": "api", "key": "tenant-7", "holder": "req-1", "lease_ns": 30000000000}
 *   answer 200               {"held": true}      false: the slot was not held (released, or its lease ended)
 * </pre>
 * Every field is required; the holder is 1-128 visible ASCII characters, the lease 1 ns to 24 h. Parsed as strictly
 * as {@link CheckJson}: unknown fields and wrong types are refused naming the field.
 */
final class InFlightJson {
    private static final Set<String> ACQUIRE_FIELDS = Set.of("domain", "key", "max_in_flight", "holder", "lease_ns");
    private static final Set<String> RELEASE_FIELDS = Set.of("domain", "key", "holder");
    private static final Set<String> RENEW_FIELDS = Set.of("domain", "key", "holder", "lease_ns");

    private InFlightJson() {}

    /** A request: the fields the route does not use are 0. */
    record Request(String domain, String key, String holder, long maxInFlight, long leaseNanos) {}

    /** The body of {@code POST /v1/in-flight/acquire}, {@code /release} or {@code /renew} ({@code op}). */
    static Request parse(String op, byte[] body) {
        JsonNode root = CheckJson.tree(
                CheckJson.MAPPER.reader(),
                new ByteArrayInputStream(body),
                "send a JSON object with 'domain', 'key' and 'holder'");
        Set<String> fields = switch (op) {
            case "acquire" -> ACQUIRE_FIELDS;
            case "renew" -> RENEW_FIELDS;
            default -> RELEASE_FIELDS;
        };
        CheckJson.object(root, "the body", fields);
        String domain = text(root, "domain", "the namespace of the keys, e.g. \"api\"");
        String key = text(root, "key", "what the slots are counted for, e.g. a tenant");
        String holder = text(root, "holder", "the id of the work holding the slot, e.g. the request's id");
        long max = fields.contains("max_in_flight")
                ? number(root, "max_in_flight", 1, Long.MAX_VALUE, "how many may be held at once, 1 or more")
                : 0;
        long lease = fields.contains("lease_ns")
                ? number(
                        root,
                        "lease_ns",
                        1,
                        Settlement.MAX_SETTLE_WITHIN.toNanos(),
                        "how long the slot is held unless released or renewed, in nanoseconds, at most 24 h")
                : 0;
        return new Request(domain, key, holder, max, lease);
    }

    private static String text(JsonNode root, String field, String what) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            throw new BadRequestException(InFlight.PROBLEM, "'" + field + "' is missing: " + what);
        }
        String s = CheckJson.text(n, field);
        if (s.isEmpty()) {
            throw new BadRequestException(InFlight.PROBLEM, "'" + field + "' is empty: " + what);
        }
        return s;
    }

    private static long number(JsonNode root, String field, long min, long max, String what) {
        JsonNode n = root.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
            throw new BadRequestException(
                    InFlight.PROBLEM,
                    "'" + field + "' must be a whole number from " + min + " to " + max + ": " + what
                            + (n == null ? " (it is missing)" : ", not " + CheckJson.kind(n) + " " + n));
        }
        return n.asLong();
    }

    private static final byte[] OVERALL_OK = JsonBuf.ascii("{\"overall_code\":\"OK\"");
    private static final byte[] OVERALL_OVER = JsonBuf.ascii("{\"overall_code\":\"OVER_LIMIT\"");
    private static final byte[] DEGRADED = JsonBuf.ascii(",\"degraded\":");
    private static final byte[] HELD = JsonBuf.ascii("{\"held\":true}");
    private static final byte[] NOT_HELD = JsonBuf.ascii("{\"held\":false}");

    /** An acquire's answer: the overall code, the degradation when there is one, and the decision as /v1/check's. */
    static void write(Decision d, ByteBuf b) {
        b.writeBytes(d.allowed() ? OVERALL_OK : OVERALL_OVER);
        if (d.degraded()) {
            b.writeBytes(DEGRADED);
            JsonBuf.string(b, d.degradation().label());
        }
        CheckAnswerJson.writeDecision(b, d);
        b.writeByte('}');
    }

    /** A release's or renewal's answer. */
    static void write(boolean held, ByteBuf b) {
        b.writeBytes(held ? HELD : NOT_HELD);
    }
}
