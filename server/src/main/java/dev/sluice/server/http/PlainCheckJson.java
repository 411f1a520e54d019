package dev.sluice.server.http;

import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.decision.CheckRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@link CheckJson}'s fast path: the common request (domain, hits, descriptors of string entries, no caller-sent
 * limit) read straight from its bytes, without a JSON library: no parser, context or symbol table per request, which
 * were a sixth of the bytes a check allocated (bench/server/README.md). Only a strict subset of JSON is read here:
 * ASCII strings without escapes, whole numbers without a sign or leading zeros, each field once. Anything else, and
 * anything wrong, is {@code null}: the tree then reads it and names the problem, so both ways accept exactly the same
 * bodies ({@code HttpFuzzTest.theFastParserAgreesWithTheTree}).
 */
final class PlainCheckJson {
    private static final byte[] DOMAIN = ascii("domain");
    private static final byte[] HITS = ascii("hits");
    private static final byte[] HITS_ADDEND = ascii("hits_addend");
    private static final byte[] DESCRIPTORS = ascii("descriptors");
    private static final byte[] ENTRIES = ascii("entries");
    private static final byte[] KEY = ascii("key");
    private static final byte[] VALUE = ascii("value");
    /** The longest string read here: what CheckJson's reader allows (longer ones: the tree refuses them). */
    private static final int MAX_STRING = 1 << 16;

    private final byte[] b;
    private int at;
    /** The last string's bounds in {@link #b}, set by {@link #string()}. */
    private int from;

    private int to;

    private PlainCheckJson(byte[] body) {
        this.b = body;
    }

    /** The request, or null when the tree must read it. */
    static @Nullable CheckRequest parse(byte[] body, int maxDescriptors) {
        return new PlainCheckJson(body).request(maxDescriptors);
    }

    private @Nullable CheckRequest request(int maxDescriptors) {
        if (!next('{')) {
            return null;
        }
        String domain = null;
        long hits = -1;
        List<List<Entry>> descriptors = null;
        long[] descriptorHits = null;
        do {
            if (!fieldName()) {
                return null;
            }
            if (is(DOMAIN)) {
                if (domain != null || !string()) {
                    return null;
                }
                domain = text();
            } else if (is(HITS) || is(HITS_ADDEND)) {
                if (hits >= 0 || (hits = number()) < 0) {
                    return null;
                }
            } else if (is(DESCRIPTORS)) {
                if (descriptors != null || !next('[')) {
                    return null;
                }
                descriptors = new ArrayList<>(2);
                descriptorHits = new long[2];
                do {
                    if (descriptors.size() == maxDescriptors) {
                        return null;
                    }
                    if (descriptorHits.length == descriptors.size()) {
                        descriptorHits = Arrays.copyOf(descriptorHits, 2 * descriptorHits.length);
                    }
                    long h = descriptor(descriptors);
                    if (h == FAILED) {
                        return null;
                    }
                    descriptorHits[descriptors.size() - 1] = h;
                } while (next(','));
                if (!next(']')) {
                    return null;
                }
            } else {
                return null;
            }
        } while (next(','));
        if (!next('}')
                || skipSpace() < b.length
                || domain == null
                || domain.isEmpty()
                || descriptors == null
                || descriptorHits == null) {
            return null;
        }
        long requestHits = hits < 0 ? 1 : hits;
        List<CheckRequest.Descriptor> out = new ArrayList<>(descriptors.size());
        for (int i = 0; i < descriptors.size(); i++) {
            long h = descriptorHits[i];
            out.add(new CheckRequest.Descriptor(descriptors.get(i), h < 0 ? requestHits : h, null));
        }
        return new CheckRequest(domain, out);
    }

    /** What {@link #descriptor} returns for a descriptor the tree must read. */
    private static final long FAILED = -2;

    /** One descriptor object, added to {@code descriptors}; its own hits, -1 for none, or {@link #FAILED}. */
    private long descriptor(List<List<Entry>> descriptors) {
        if (!next('{')) {
            return FAILED;
        }
        List<Entry> entries = null;
        long hits = -1;
        do {
            if (!fieldName()) {
                return FAILED;
            }
            if (is(ENTRIES)) {
                if (entries != null || !next('[')) {
                    return FAILED;
                }
                entries = new ArrayList<>(2);
                do {
                    Entry e = entry();
                    if (e == null) {
                        return FAILED;
                    }
                    entries.add(e);
                } while (next(','));
                if (!next(']')) {
                    return FAILED;
                }
            } else if (is(HITS) || is(HITS_ADDEND)) {
                if (hits >= 0 || (hits = number()) < 0) {
                    return FAILED;
                }
            } else {
                return FAILED;
            }
        } while (next(','));
        if (!next('}') || entries == null) {
            return FAILED;
        }
        descriptors.add(List.copyOf(entries));
        return hits;
    }

    /** One entry object of string key (not empty) and value (default empty), or null. */
    private @Nullable Entry entry() {
        if (!next('{')) {
            return null;
        }
        String key = null;
        String value = null;
        do {
            if (!fieldName()) {
                return null;
            }
            if (is(KEY)) {
                if (key != null || !string()) {
                    return null;
                }
                key = text();
            } else if (is(VALUE)) {
                if (value != null || !string()) {
                    return null;
                }
                value = text();
            } else {
                return null;
            }
        } while (next(','));
        if (!next('}') || key == null || key.isEmpty()) {
            return null;
        }
        return new Entry(key, value == null ? "" : value);
    }

    /** A field's name and its colon; false for anything else. */
    private boolean fieldName() {
        return string() && next(':');
    }

    /** Whether the last string is {@code name}. */
    private boolean is(byte[] name) {
        return Arrays.equals(b, from, to, name, 0, name.length);
    }

    private String text() {
        return new String(b, from, to - from, StandardCharsets.ISO_8859_1); // ASCII: see string()
    }

    /** A string of printable ASCII without escapes, its bounds in {@link #from}/{@link #to}; false otherwise. */
    private boolean string() {
        if (!next('"')) {
            return false;
        }
        int i = at;
        int end = Math.min(b.length, at + MAX_STRING + 1);
        while (i < end) {
            byte c = b[i];
            if (c == '"') {
                from = at;
                to = i;
                at = i + 1;
                return true;
            }
            if (c < 0x20 || c == '\\' || c == 0x7f) { // control, escape, or (negative) beyond ASCII
                return false;
            }
            i++;
        }
        return false;
    }

    /** A whole number from 0 to {@link CheckJson#MAX_HITS}, JSON's way (no sign, no leading zero), or -1. */
    private long number() {
        int i = skipSpace();
        long n = 0;
        int digits = 0;
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            if (++digits > 10) {
                return -1;
            }
            n = 10 * n + (b[i] - '0');
            i++;
        }
        if (digits == 0 || (digits > 1 && b[at] == '0') || n > CheckJson.MAX_HITS) {
            return -1;
        }
        if (i < b.length && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
            return -1;
        }
        at = i;
        return n;
    }

    /** Skips white space; true and past {@code c} if it comes next. */
    private boolean next(char c) {
        int i = skipSpace();
        if (i < b.length && b[i] == c) {
            at = i + 1;
            return true;
        }
        return false;
    }

    /** Moves past JSON's white space; the index reached. */
    private int skipSpace() {
        while (at < b.length && (b[at] == ' ' || b[at] == '\n' || b[at] == '\r' || b[at] == '\t')) {
            at++;
        }
        return at;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
