package dev.sluice.server;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

/**
 * Byte- and text-level mutations shared by the parser fuzz tests: the classic dumb-fuzzer moves (flip bits,
 * truncate, insert, delete, duplicate a slice, splice in a dictionary word) driven by a seeded {@link Random}, so
 * that jqwik can shrink and replay a failing case from its seed.
 */
final class Mutations {
    /** Odd text that parsers tend to mishandle: surrogates, NUL, BOM, RTL marks, combining marks, emoji, …. */
    static final List<String> ODD_TEXT = List.of(
            "",
            "\u0000",
            "\uFEFF",
            "\u202E",
            "\u0301",
            "\uD83D\uDE00",
            "\uD800",
            "\uDFFF",
            "\u00A0",
            "\u2028",
            "\u2029",
            "\r",
            "\t",
            "\\",
            "\"",
            "'",
            "İ",
            "ß",
            "µ",
            "٣",
            "\u0085",
            "%00",
            "%",
            "${x}",
            "{{x}}",
            "*",
            "&",
            "|",
            "=",
            ",",
            ":",
            "#",
            "-",
            "\n- ",
            "..",
            "\u0600",
            "𝟘",
            "ǅ",
            "K",
            "\u00FF\u00FE");

    private Mutations() {}

    /** Applies {@code count} random byte-level mutations; the words are spliced in as UTF-8. */
    static byte[] mutate(byte[] in, Random rnd, int count, List<String> words) {
        byte[] b = in;
        for (int n = 0; n < count; n++) {
            b = once(b, rnd, words);
        }
        return b;
    }

    private static byte[] once(byte[] b, Random rnd, List<String> words) {
        int len = b.length;
        int at = len == 0 ? 0 : rnd.nextInt(len);
        switch (rnd.nextInt(8)) {
            case 0 -> { // flip one bit
                if (len == 0) {
                    return b;
                }
                byte[] c = b.clone();
                c[at] ^= (byte) (1 << rnd.nextInt(8));
                return c;
            }
            case 1 -> { // truncate
                return java.util.Arrays.copyOf(b, at);
            }
            case 2 -> { // insert a random byte
                return splice(b, at, 0, new byte[] {(byte) rnd.nextInt(256)});
            }
            case 3 -> { // delete a short run
                int del = Math.min(len - at, 1 + rnd.nextInt(8));
                return splice(b, at, del, new byte[0]);
            }
            case 4 -> { // duplicate a slice (duplicated fields, repeated list items)
                if (len == 0) {
                    return b;
                }
                int end = at + rnd.nextInt(Math.min(64, len - at) + 1);
                byte[] slice = java.util.Arrays.copyOfRange(b, at, end);
                return splice(b, end, 0, slice);
            }
            case 5 -> { // overwrite a byte with an interesting one
                if (len == 0) {
                    return b;
                }
                byte[] c = b.clone();
                byte[] interesting = {
                    0,
                    (byte) 0xff,
                    (byte) 0x80,
                    (byte) 0xc0,
                    '"',
                    '\\',
                    '{',
                    '}',
                    '[',
                    ']',
                    ':',
                    ',',
                    '\n',
                    '\r',
                    '\t',
                    ' ',
                    '-',
                    '0',
                    '9',
                    'e',
                    '.',
                    '&',
                    '*',
                    '!',
                    '%',
                    '#',
                    '|',
                    '>'
                };
                c[at] = interesting[rnd.nextInt(interesting.length)];
                return c;
            }
            case 6 -> { // splice in a dictionary word
                String w = words.get(rnd.nextInt(words.size()));
                return splice(b, at, 0, w.getBytes(StandardCharsets.UTF_8));
            }
            default -> { // replace a run with a dictionary word
                String w = words.get(rnd.nextInt(words.size()));
                int del = Math.min(len - at, 1 + rnd.nextInt(6));
                return splice(b, at, del, w.getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    static byte[] splice(byte[] b, int at, int delete, byte[] insert) {
        byte[] out = new byte[b.length - delete + insert.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(insert, 0, out, at, insert.length);
        System.arraycopy(b, at + delete, out, at + insert.length, b.length - at - delete);
        return out;
    }

    /** A random string of 0..maxLen characters, mostly ASCII with odd text mixed in. */
    static String text(Random rnd, int maxLen) {
        int len = rnd.nextInt(maxLen + 1);
        StringBuilder sb = new StringBuilder(len);
        while (sb.length() < len) {
            int k = rnd.nextInt(10);
            if (k < 6) {
                sb.append((char) (0x20 + rnd.nextInt(0x5f)));
            } else if (k < 8) {
                sb.append(ODD_TEXT.get(rnd.nextInt(ODD_TEXT.size())));
            } else {
                sb.append((char) rnd.nextInt(0x10000)); // any UTF-16 unit, lone surrogates included
            }
        }
        return sb.toString();
    }
}
