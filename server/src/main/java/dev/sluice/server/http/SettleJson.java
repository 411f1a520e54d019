package dev.sluice.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Settlement;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.CheckRequest;
import dev.sluice.server.decision.Settlements;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The JSON of a cost known only afterwards ({@link Settlements}): a {@code reservation} on {@code POST /v1/check},
 * and {@code POST /v1/settle}.
 *
 * <pre>
 * POST /v1/check   {"domain": "llm", "hits": 500,            the estimate
 *                   "reservation": {"id": "r-7f3a",            1-128 visible ASCII characters, e.g. a UUID
 *                                   "settle_within_ns": 600000000000},   optional, default 15 min, at most 24 h
 *                   "descriptors": [{"entries": [{"key": "api_key", "value": "k-42"}]}]}   exactly one
 * POST /v1/settle  {"domain": "llm", "reservation": {"id": "r-7f3a"}, "actual": 734,
 *                   "descriptors": [{"entries": [{"key": "api_key", "value": "k-42"}]}]}
 *   answer 200     {"settled": true, "rule": "llm.api_key", "limit": {…}, "estimate": 500, "adjusted": 234,
 *                   "remaining": 0}       settled false (and zeros): nothing was pending, nothing changed
 * </pre>
 * Parsed as strictly as {@link CheckJson}: unknown fields and wrong types are refused naming the field.
 */
final class SettleJson {
    private static final Set<String> CHECK_FIELDS =
            Set.of("domain", "descriptors", "hits", "hits_addend", "reservation");
    private static final Set<String> SETTLE_FIELDS = Set.of("domain", "descriptors", "reservation", "actual");
    private static final Set<String> RESERVATION_FIELDS = Set.of("id", "settle_within_ns");

    private SettleJson() {}

    /** A check, with its reservation's id and settle-within when it has one (a null id: a plain check). */
    record Check(CheckRequest request, @Nullable String id, Duration settleWithin) {}

    /** A settle: the descriptor, the reservation's id and the actual cost. */
    record Settle(CheckRequest request, String id, long actual) {}

    /** {@code POST /v1/check}'s body, {@link CheckJson#parse} with an optional {@code reservation}. */
    static Check parseCheck(byte[] body, int maxDescriptors) {
        CheckRequest plain = PlainCheckJson.parse(body, maxDescriptors);
        if (plain != null) {
            return new Check(plain, null, Settlement.DEFAULT_SETTLE_WITHIN);
        }
        JsonNode root = CheckJson.tree(new ByteArrayInputStream(body));
        CheckRequest request = CheckJson.parse(root, maxDescriptors, CHECK_FIELDS);
        JsonNode r = root.get("reservation");
        if (r == null || r.isNull()) {
            return new Check(request, null, Settlement.DEFAULT_SETTLE_WITHIN);
        }
        CheckJson.object(r, "reservation", RESERVATION_FIELDS);
        Duration within = Settlement.DEFAULT_SETTLE_WITHIN;
        JsonNode w = r.get("settle_within_ns");
        if (w != null && !w.isNull()) {
            if (!w.isIntegralNumber() || !w.canConvertToLong() || w.asLong() < 1) {
                throw new BadRequestException(
                        "invalid-reservation",
                        "reservation.settle_within_ns must be a whole number of nanoseconds ≥ 1, at most "
                                + Settlement.MAX_SETTLE_WITHIN.toNanos()
                                + " (24 h): how long the reservation waits for its settle");
            }
            within = Duration.ofNanos(w.asLong());
        }
        return new Check(request, id(r), within);
    }

    /** {@code POST /v1/settle}'s body. */
    static Settle parseSettle(byte[] body, int maxDescriptors) {
        JsonNode root = CheckJson.tree(new ByteArrayInputStream(body));
        CheckRequest request = CheckJson.parse(root, maxDescriptors, SETTLE_FIELDS);
        JsonNode ds = root.get("descriptors");
        for (int i = 0; i < ds.size(); i++) {
            if (ds.get(i).has("hits") || ds.get(i).has("hits_addend")) {
                throw new BadRequestException(
                        "invalid-reservation",
                        "descriptors[" + i + "] has hits: a settle takes the cost as 'actual', beside 'reservation'");
            }
        }
        JsonNode r = root.get("reservation");
        if (r == null || r.isNull()) {
            throw new BadRequestException(
                    "invalid-reservation",
                    "'reservation' is missing: name the reservation to settle, {\"id\": …} as sent to /v1/check");
        }
        CheckJson.object(r, "reservation", Set.of("id"));
        JsonNode a = root.get("actual");
        if (a == null || !a.isIntegralNumber() || !a.canConvertToLong() || a.asLong() < 0) {
            throw new BadRequestException(
                    "invalid-reservation",
                    "'actual' must be a whole number ≥ 0: the cost the work turned out to have"
                            + (a == null ? " (it is missing)" : ", not " + CheckJson.kind(a) + " " + a));
        }
        return new Settle(request, id(r), a.asLong());
    }

    private static String id(JsonNode r) {
        JsonNode id = r.get("id");
        if (id == null || id.isNull()) {
            throw new BadRequestException(
                    "invalid-reservation", "reservation.id is missing: give each reservation an id, e.g. a UUID");
        }
        return CheckJson.text(id, "reservation.id");
    }

    private static final byte[] SETTLED = JsonBuf.ascii("{\"settled\":true");
    private static final byte[] NOT_SETTLED = JsonBuf.ascii("{\"settled\":false");
    private static final byte[] RULE = JsonBuf.ascii(",\"rule\":");
    private static final byte[] ESTIMATE = JsonBuf.ascii(",\"estimate\":");
    private static final byte[] ADJUSTED = JsonBuf.ascii(",\"adjusted\":");
    private static final byte[] REMAINING = JsonBuf.ascii(",\"remaining\":");

    /** The answer of {@code POST /v1/settle}. */
    static void write(Settlements.Settled s, ByteBuf b) {
        Settlement st = s.settlement();
        b.writeBytes(st.settled() ? SETTLED : NOT_SETTLED).writeBytes(RULE);
        JsonBuf.string(b, s.rule().id());
        CheckAnswerJson.writeLimit(b, s.rule(), s.limit());
        b.writeBytes(ESTIMATE);
        JsonBuf.number(b, st.estimate());
        b.writeBytes(ADJUSTED);
        JsonBuf.number(b, st.adjusted());
        b.writeBytes(REMAINING);
        JsonBuf.number(b, st.remaining());
        b.writeByte('}');
    }
}
