package dev.sluice.servlet;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An Ant-style path pattern, as Spring and servlet users write them: {@code /api/**} (anything under /api, and
 * /api itself), {@code /api/*}{@code /items} ({@code *} is any run of characters within one segment),
 * {@code /login} (exact). Matched against the decoded, normalized path inside the application (servlet path +
 * path info), so {@code /api/../admin} or {@code /api;x=1} cannot dodge a rule.
 */
public final class PathPattern {
    private final String pattern;
    private final String[] segments;
    /** For {@code /a/b/**} and {@code /a/b}: the literal {@code /a/b}, matched without splitting the path. */
    private final @Nullable String literal;

    private final boolean literalAndBelow;

    private PathPattern(String pattern) {
        this.pattern = pattern;
        this.segments = split(pattern);
        String base = pattern.endsWith("/**") ? pattern.substring(0, pattern.length() - 3) : pattern;
        boolean wild = base.indexOf('*') >= 0 || base.indexOf('?') >= 0;
        this.literal = wild ? null : base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.literalAndBelow = pattern.endsWith("/**");
    }

    /**
     * The pattern {@code pattern}, without surrounding blanks.
     *
     * @throws IllegalArgumentException when the pattern does not start with {@code /}
     */
    public static PathPattern of(String pattern) {
        Objects.requireNonNull(pattern, "path pattern must not be null: e.g. /api/**");
        String p = pattern.strip();
        if (!p.startsWith("/")) {
            throw new IllegalArgumentException("path pattern '" + pattern + "' must start with '/': e.g. /api/**");
        }
        return new PathPattern(p);
    }

    /** Whether {@code path} (starting with {@code /}) matches. */
    public boolean matches(String path) {
        if (literal != null && path.indexOf("//") < 0) {
            // the common shapes, on the hot path of every request: no allocation
            int n = literal.length();
            int end = path.endsWith("/") ? path.length() - 1 : path.length();
            if (literalAndBelow) {
                return path.startsWith(literal) && (end == n || (end > n && path.charAt(n) == '/'));
            }
            return end == n && path.startsWith(literal);
        }
        return match(segments, 0, split(path), 0);
    }

    private static boolean match(String[] pat, int pi, String[] path, int si) {
        while (pi < pat.length) {
            String p = pat[pi];
            if (p.equals("**")) {
                if (pi == pat.length - 1) {
                    return true;
                }
                for (int k = si; k <= path.length; k++) {
                    if (match(pat, pi + 1, path, k)) {
                        return true;
                    }
                }
                return false;
            }
            if (si >= path.length || !glob(p, 0, path[si], 0)) {
                return false;
            }
            pi++;
            si++;
        }
        return si == path.length;
    }

    /** {@code *} is any run of characters, {@code ?} one character. */
    private static boolean glob(String p, int pi, String s, int si) {
        while (pi < p.length()) {
            char c = p.charAt(pi);
            if (c == '*') {
                for (int k = si; k <= s.length(); k++) {
                    if (glob(p, pi + 1, s, k)) {
                        return true;
                    }
                }
                return false;
            }
            if (si >= s.length() || (c != '?' && c != s.charAt(si))) {
                return false;
            }
            pi++;
            si++;
        }
        return si == s.length();
    }

    private static String[] split(String path) {
        String p = path.startsWith("/") ? path.substring(1) : path;
        if (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p.isEmpty() ? new String[0] : p.split("/", -1);
    }

    @Override
    public String toString() {
        return pattern;
    }
}
