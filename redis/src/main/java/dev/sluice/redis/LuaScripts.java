package dev.sluice.redis;

import dev.sluice.Algorithm;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The scripts Sluice runs, read once from {@code src/main/resources/dev/sluice/redis}: for each algorithm
 * {@code common.lua + [window_math.lua] + <algorithm>.lua + run.lua}, and one script with every algorithm for a multi-permit
 * that mixes them, one read-only script with every algorithm for {@code peek} ({@code peek.lua} instead
 * of {@code run.lua}), two with every algorithm for a cost known only afterwards ({@code estimate.lua},
 * {@code settle.lua}), {@code common.lua + in_flight.lua} for work in flight, and one with all of these for a batch
 * ({@code batch.lua}: decisions, estimates, settles and in-flight steps of many callers). The last three files each
 * define one function (one body), which their own script calls once and {@code batch.lua} once per entry.
 * The text is constant (keys and numbers travel as KEYS and ARGV), so each script has one
 * SHA-1 and is called with {@code EVALSHA}; {@code EVAL} of the same text is the fallback on
 * {@code NOSCRIPT}, and loads it again as a side effect.
 */
final class LuaScripts {

    /** One script: its text and digest. */
    static final class Script {
        private final String name;
        private final byte[] body;
        private final String sha;

        Script(String name, byte[] body, String sha) {
            this.name = name;
            this.body = body;
            this.sha = sha;
        }

        String name() {
            return name;
        }

        /** The script's text, UTF-8: the caller must not change it. */
        byte[] body() {
            return body;
        }

        String sha() {
            return sha;
        }
    }

    final Script gcra;
    final Script fixedWindow;
    final Script slidingWindow;
    final Script slidingLog;
    final Script mixed;
    /** Read-only, every algorithm: reports one key's state and the instant, for peek (see peek.lua). */
    final Script peek;
    /** Every algorithm: many independent single-permit decisions in one call (see batch.lua). */
    final Script batch;
    /** Every algorithm: a decision on an estimate that leaves a pending reservation (see estimate.lua). */
    final Script estimate;
    /** Every algorithm: settles a pending reservation (see settle.lua). */
    final Script settle;
    /** Work in flight: one key's slots (common.lua and in_flight.lua). */
    final Script inFlight;

    private LuaScripts() {
        String common = read("common.lua");
        String windows = read("window_math.lua");
        String run = read("run.lua");
        String g = read("gcra.lua");
        String f = read("fixed_window.lua");
        String s = read("sliding_window.lua");
        String l = read("sliding_log.lua");
        gcra = script("gcra", common, g, run);
        fixedWindow = script("fixed_window", common, windows + "\n" + f, run);
        slidingWindow = script("sliding_window", common, windows + "\n" + s, run);
        slidingLog = script("sliding_log", common, l, run);
        String every = windows + "\n" + g + "\n" + f + "\n" + s + "\n" + l;
        mixed = script("mixed", common, every, run);
        peek = script("peek", common, every, read("peek.lua"));
        String e = read("estimate.lua");
        String t = read("settle.lua");
        String i = read("in_flight.lua");
        batch = script("batch", common, every + "\n" + e + "\n" + t + "\n" + i, read("batch.lua"));
        // the operations' own scripts: each file defines its operation, called once on KEYS and ARGV from 3
        estimate = script("estimate", common, every + "\n" + e, "return e_op(KEYS[1], KEYS[2], 2)\n");
        settle = script("settle", common, every + "\n" + t, "return s_op(KEYS[1], KEYS[2], 2)\n");
        inFlight = script("in_flight", common, i, "return i_op(KEYS[1], 2)\n");
    }

    static final LuaScripts INSTANCE = new LuaScripts();

    Script forAlgorithm(Algorithm a) {
        return switch (a) {
            case TOKEN_BUCKET, GCRA -> gcra;
            case FIXED_WINDOW -> fixedWindow;
            case SLIDING_WINDOW -> slidingWindow;
            case SLIDING_LOG -> slidingLog;
        };
    }

    Script[] all() {
        return new Script[] {
            gcra, fixedWindow, slidingWindow, slidingLog, mixed, peek, batch, estimate, settle, inFlight
        };
    }

    private static Script script(String name, String common, String algorithms, String run) {
        byte[] body = (common + "\n" + algorithms + "\n" + run).getBytes(StandardCharsets.UTF_8);
        return new Script(name, body, sha1Hex(body));
    }

    private static String read(String file) {
        try (InputStream in = LuaScripts.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("script " + file + " is missing from the sluice-redis jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script " + file, e);
        }
    }

    private static String sha1Hex(byte[] body) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-1").digest(body);
            StringBuilder sb = new StringBuilder(40);
            for (byte b : d) {
                sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }
}
