package dev.sluice.server.config;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What a rule does with a cost known only when the work ends: envoy's {@code apply_on_stream_done}, where Envoy sends
 * a descriptor once more when the response stream ends, with {@code hits_addend} = the actual cost (LLM tokens,
 * bytes), and ignores the answer. Set on a descriptor beside its {@code rate_limit}, in one of two forms:
 *
 * <ul>
 *   <li>{@code charge_on_stream_done: true} ({@link #charges()}): a request with {@code hits_addend: 0} is a check
 *       (would the next request pass?), one with {@code hits_addend ≥ 1} is a charge of work already done, counted
 *       in full whatever the state (in both semantics; the key may go over its limit, which its next requests wait
 *       out), and answered OK;</li>
 *   <li>{@code reservation: {id_key: request_id, settle_within: 10m}} ({@link #idKey()}): the descriptor's last entry
 *       with key {@code id_key} carries the request's id (Envoy's {@code request_headers} action on
 *       {@code x-request-id}) and is no part of the limit's key. The first request with an id reserves its hits as
 *       the estimate ({@link dev.sluice.RateLimiter#tryAcquireEstimate}: admitted or denied on it), the next one
 *       with the same id settles the reservation at its hits ({@link dev.sluice.RateLimiter#settle}); a reservation
 *       not settled within {@code settle_within} settles at its estimate.</li>
 * </ul>
 *
 * @param idKey        the entry key carrying the request's id; null for {@code charge_on_stream_done}
 * @param settleWithin how long a reservation waits for its settle (the default is {@link
 *                     dev.sluice.Settlement#DEFAULT_SETTLE_WITHIN}); unused when charging
 */
public record StreamDone(@Nullable String idKey, Duration settleWithin) {

    /** True for {@code charge_on_stream_done}: hits ≥ 1 are charged, not admitted. */
    public boolean charges() {
        return idKey == null;
    }
}
