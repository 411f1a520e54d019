package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.PermitDecisions;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.LogState;
import dev.sluice.algorithm.SlidingLog;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Looks decoded from a script's reply, with the pure {@link Algorithms#peek} on the very state the script read, at
 * the very instant it used: {@code peek.lua}'s, and each permit's own decision of a multi-permit call that did not
 * commit ({@link PermitDecisions}).
 */
final class ScriptLooks {
    private ScriptLooks() {}

    /**
     * The Decision of a peek, from {@code peek.lua}'s reply {@code {now_us, state...}}: the pure step
     * {@link Algorithms#peek} on the very state the script read, at the very instant it used.
     */
    static Decision peek(ScriptCall call, List<Object> reply) {
        Limit limit = call.limit(0);
        long nowNanos = ScriptCall.num(reply, 0) * 1000;
        State state = switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA ->
                ScriptCall.num(reply, 1) == -3 // a named limit's value under other numbers: converted here
                        ? new TatState(
                                GcraChange.backlog(ScriptCall.bytes(reply, 2), ScriptCall.num(reply, 0), limit),
                                nowNanos)
                        : new TatState(
                                ScriptCall.num(reply, 1) * (1000 * limit.timeScale()) + ScriptCall.num(reply, 2),
                                nowNanos);
            case FIXED_WINDOW ->
                ScriptCall.num(reply, 1) < 0
                        ? WindowState.FRESH
                        : new WindowState(ScriptCall.num(reply, 1), ScriptCall.num(reply, 2));
            case SLIDING_WINDOW ->
                ScriptCall.num(reply, 1) < 0
                        ? SlidingWindowState.FRESH
                        : new SlidingWindowState(
                                ScriptCall.num(reply, 1), ScriptCall.num(reply, 2), ScriptCall.num(reply, 3));
            case SLIDING_LOG -> {
                int n = (reply.size() - 1) / 2;
                long[] times = new long[n];
                long[] logged = new long[n];
                for (int j = 0; j < n; j++) {
                    times[j] = ScriptCall.num(reply, 1 + 2 * j) * 1000;
                    logged[j] = ScriptCall.num(reply, 2 + 2 * j);
                }
                yield new LogState(times, logged);
            }
        };
        return Algorithms.peek(state, nowNanos, limit, call.cost(0));
    }

    /**
     * Each permit's own decision of a multi-permit call (see {@link PermitDecisions}): when the script committed,
     * each permit's step; when it did not, a look at each permit's key as the script read it (the state reported for
     * the first permit naming that key, before any permit of the call), which nothing changed. One approximation: the
     * script reports a sliding log's retry only for the state each permit's own step saw, so a permit that repeats the
     * key of an earlier one that would have fit gets a retry counted as if that earlier one had been taken (later than
     * the exact one, never earlier); every other number, and every other algorithm, is exact.
     */
    static PermitDecisions each(ScriptCall call, List<Object> reply) {
        List<Decision> steps = call.decisions(reply);
        Decision overall = Decision.mostRestrictive(steps);
        if (overall.allowed()) {
            return new PermitDecisions(overall, steps);
        }
        long nowNanos = ScriptCall.num(reply, 0) * 1000;
        List<Decision> looks = new ArrayList<>(call.permits());
        for (int i = 0; i < call.permits(); i++) {
            int first = 0;
            while (!Arrays.equals(call.key(first), call.key(i))) {
                first++;
            }
            int r = 2 + 4 * first;
            // a sliding log's retry is the script's for the permit's own cost: its own step's (s2 at its own place)
            int retry = 2 + 4 * i + 2;
            looks.add(look(
                    call.limit(i),
                    call.cost(i),
                    nowNanos,
                    ScriptCall.num(reply, r + 1),
                    ScriptCall.num(reply, call.limit(i).algorithm() == Algorithm.SLIDING_LOG ? retry : r + 2),
                    ScriptCall.num(reply, r + 3)));
        }
        return new PermitDecisions(overall, looks);
    }

    /** A peek for {@code cost} on the state a script reported (see {@link ScriptCall}), at {@code nowNanos}. */
    private static Decision look(Limit limit, long cost, long nowNanos, long s1, long s2, long s3) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA ->
                Algorithms.peek(new TatState(s1 * (1000 * limit.timeScale()) + s2, nowNanos), nowNanos, limit, cost);
            case FIXED_WINDOW ->
                Algorithms.peek(s1 < 0 ? WindowState.FRESH : new WindowState(s1, s2), nowNanos, limit, cost);
            case SLIDING_WINDOW ->
                Algorithms.peek(
                        s1 < 0 ? SlidingWindowState.FRESH : new SlidingWindowState(s1, s2, s3), nowNanos, limit, cost);
            // the log's summary: s1 = live sum, s3 = time_us of the newest live entry (-1 when none); a cost that
            // does not fit is the step's own denial, whose retry (s2) the script computed for this very cost
            case SLIDING_LOG ->
                s1 + cost > limit.capacity()
                        ? SlidingLog.decide(s1, s2 * 1000, s3 * 1000, nowNanos, limit, cost)
                        : new Decision(
                                true,
                                limit.capacity(),
                                limit.capacity() - s1,
                                0,
                                s3 < 0 ? 0 : s3 * 1000 + limit.periodNanos() - nowNanos);
        };
    }
}
