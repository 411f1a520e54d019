package dev.sluice.server.http;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.server.config.Durations;
import dev.sluice.server.config.Rule;
import dev.sluice.server.decision.CheckResult;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code POST /v1/check}, {@code /v1/peek} and {@code /v1/reserve} ({@link CheckJson} reads their
 * requests): the overall code, one status per descriptor with the rule and limit that decided it and the
 * decision's figures, then the combined decision. Written straight into the answer's buffer from constant bytes,
 * without a JSON library: this is on every decision's path.
 */
final class CheckAnswerJson {
    private CheckAnswerJson() {}

    private static final byte[] OVERALL_OK = JsonBuf.ascii("{\"overall_code\":\"OK\"");
    private static final byte[] OVERALL_OVER = JsonBuf.ascii("{\"overall_code\":\"OVER_LIMIT\"");
    private static final byte[] DEGRADED = JsonBuf.ascii(",\"degraded\":");
    private static final byte[] STATUSES = JsonBuf.ascii(",\"statuses\":[");
    private static final byte[][] CODES = bytesOf(CheckResult.Code.values(), c -> "{\"code\":\"" + c.name() + "\"");
    private static final byte[][] OUTCOMES = bytesOf(
            CheckResult.Outcome.values(), o -> ",\"outcome\":\"" + o.name().toLowerCase(Locale.ROOT) + "\"");
    private static final byte[] RULE = JsonBuf.ascii(",\"rule\":");
    private static final byte[] NAME = JsonBuf.ascii(",\"name\":");
    private static final byte[] SHADOW_MODE = JsonBuf.ascii(",\"shadow_mode\":true");
    private static final byte[] HITS = JsonBuf.ascii(",\"hits\":");
    private static final byte[] COMBINED = JsonBuf.ascii(",\"combined\":true");
    private static final byte[] REMAINING = JsonBuf.ascii(",\"remaining\":");
    private static final byte[] RETRY_AFTER_MS = JsonBuf.ascii(",\"retry_after_ms\":");
    private static final byte[] RESET_AFTER_MS = JsonBuf.ascii(",\"reset_after_ms\":");
    private static final byte[] RETRY_AFTER_NS = JsonBuf.ascii(",\"retry_after_ns\":");
    private static final byte[] RESET_AFTER_NS = JsonBuf.ascii(",\"reset_after_ns\":");
    private static final byte[] DECISION_ALLOWED = JsonBuf.ascii(",\"decision\":{\"allowed\":true");
    private static final byte[] DECISION_DENIED = JsonBuf.ascii(",\"decision\":{\"allowed\":false");
    private static final byte[] LIMIT = JsonBuf.ascii(",\"limit\":");
    private static final byte[] LIMIT_ALGORITHM = JsonBuf.ascii(",\"limit\":{\"algorithm\":");
    private static final byte[] REQUESTS_PER_UNIT = JsonBuf.ascii("\"requests_per_unit\":");
    private static final byte[] UNIT = JsonBuf.ascii(",\"unit\":");
    private static final byte[] WINDOW = JsonBuf.ascii(",\"window\":");
    private static final byte[] CAPACITY = JsonBuf.ascii(",\"capacity\":");

    /** Each constant's bytes, in the order of {@code values()}: read with {@link #bytesOf(byte[][], Enum)}. */
    private static <E extends Enum<E>> byte[][] bytesOf(E[] values, Function<E, String> text) {
        byte[][] out = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            out[i] = JsonBuf.ascii(text.apply(values[i]));
        }
        return out;
    }

    /** The bytes of {@code e} in a table made by {@link #bytesOf(Enum[], Function)}. */
    @SuppressWarnings("EnumOrdinal") // a table of constant bytes indexed by ordinal, read on every response
    private static byte[] bytesOf(byte[][] table, Enum<?> e) {
        return table[e.ordinal()];
    }

    /**
     * Writes the response body: the overall code and one status per descriptor, each with the rule and limit that
     * decided it and the decision's figures, then the combined decision.
     */
    static void write(CheckResult r, ByteBuf b) {
        b.writeBytes(r.allowed() ? OVERALL_OK : OVERALL_OVER);
        Degradation degraded = r.degradation();
        if (degraded != Degradation.NONE) {
            // the store did not decide: a failure policy did (fail open, fail closed or local limits)
            b.writeBytes(DEGRADED);
            JsonBuf.string(b, degraded.label());
        }
        b.writeBytes(STATUSES);
        List<CheckResult.Status> statuses = r.statuses();
        for (int i = 0; i < statuses.size(); i++) { // by index: an iterator was allocated on every answer
            CheckResult.Status s = statuses.get(i);
            if (i > 0) {
                b.writeByte(',');
            }
            b.writeBytes(bytesOf(CODES, s.code())).writeBytes(bytesOf(OUTCOMES, s.outcome()));
            Rule rule = s.rule();
            if (rule != null) {
                b.writeBytes(RULE);
                JsonBuf.string(b, rule.id());
                if (rule.name() != null) {
                    b.writeBytes(NAME);
                    JsonBuf.string(b, rule.name());
                }
                if (rule.shadowMode()) {
                    b.writeBytes(SHADOW_MODE);
                }
                if (rule.kind() != Rule.Kind.UNLIMITED) {
                    writeLimit(b, rule, s.limit());
                }
            }
            b.writeBytes(HITS);
            JsonBuf.number(b, s.hits());
            Decision d = s.decision();
            if (d != null && d.degraded()) {
                b.writeBytes(DEGRADED);
                JsonBuf.string(b, d.degradation().label());
            }
            if (d != null && !s.detailed()) {
                // fallback for a store without peek: only the combined decision is known (see "decision")
                b.writeBytes(COMBINED);
            } else if (d != null) {
                b.writeBytes(REMAINING);
                JsonBuf.number(b, d.remaining());
                b.writeBytes(RETRY_AFTER_MS);
                JsonBuf.number(b, ceilMillis(d.retryAfterNanos()));
                b.writeBytes(RESET_AFTER_MS);
                JsonBuf.number(b, ceilMillis(d.resetAfterNanos()));
                b.writeBytes(RETRY_AFTER_NS);
                JsonBuf.number(b, d.retryAfterNanos());
                b.writeBytes(RESET_AFTER_NS);
                JsonBuf.number(b, d.resetAfterNanos());
            }
            b.writeByte('}');
        }
        Decision c = r.combined();
        if (c == null) {
            b.writeByte(']').writeByte('}');
            return;
        }
        b.writeByte(']');
        writeDecision(b, c);
        b.writeByte('}');
    }

    /** {@code ,"decision":{…}}: a decision's figures (also the answer of {@code /v1/in-flight/acquire}). */
    static void writeDecision(ByteBuf b, Decision c) {
        b.writeBytes(c.allowed() ? DECISION_ALLOWED : DECISION_DENIED);
        b.writeBytes(LIMIT);
        JsonBuf.number(b, c.limit());
        b.writeBytes(REMAINING);
        JsonBuf.number(b, c.remaining());
        b.writeBytes(RETRY_AFTER_NS);
        JsonBuf.number(b, c.retryAfterNanos());
        b.writeBytes(RESET_AFTER_NS);
        JsonBuf.number(b, c.resetAfterNanos());
        b.writeByte('}');
    }

    /** {@code ,"limit":{…}}: the rule's numbers, and the limit's capacity when given. */
    static void writeLimit(ByteBuf b, Rule rule, @Nullable Limit l) {
        if (rule.algorithm() != null) {
            b.writeBytes(LIMIT_ALGORITHM);
            JsonBuf.string(b, rule.algorithm().configName());
            b.writeByte(',');
        } else {
            b.writeBytes(LIMIT).writeByte('{');
        }
        b.writeBytes(REQUESTS_PER_UNIT);
        JsonBuf.number(b, rule.requestsPerUnit());
        if (rule.unit() != null) {
            b.writeBytes(UNIT);
            JsonBuf.string(b, rule.unit());
        }
        if (rule.window() != null) {
            b.writeBytes(WINDOW).writeBytes(window(rule.window()));
        }
        if (l != null) {
            b.writeBytes(CAPACITY);
            JsonBuf.number(b, l.capacity());
        }
        b.writeByte('}');
    }

    /**
     * A window as JSON, formatted once: the rules have a few; a caller-sent limit's are kept too, up to
     * {@link #MAX_WINDOWS}, then formatted each time.
     */
    private static byte[] window(Duration window) {
        byte[] json = WINDOWS.get(window);
        if (json == null) {
            ByteBuf tmp = Unpooled.buffer(16);
            JsonBuf.string(tmp, Durations.format(window));
            json = ByteBufUtil.getBytes(tmp);
            if (WINDOWS.size() < MAX_WINDOWS) {
                WINDOWS.put(window, json);
            }
        }
        return json;
    }

    private static final int MAX_WINDOWS = 1024;
    private static final ConcurrentHashMap<Duration, byte[]> WINDOWS = new ConcurrentHashMap<>();

    static long ceilMillis(long nanos) {
        return nanos / 1_000_000L + (nanos % 1_000_000L == 0 ? 0 : 1);
    }
}
