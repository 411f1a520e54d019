package dev.sluice.server.decision;

import dev.sluice.Permit;
import dev.sluice.server.config.DomainRules.Entry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The store key of a descriptor: its domain and its entries as sent ({@code api|plan=free|user=42}, with
 * {@code \ | =} escaped so that no two descriptors share a key), so every distinct value of a key-only rule gets its
 * own bucket, as in envoy; an entry matched through a {@code share_threshold} wildcard comes with the pattern as its
 * value ({@link dev.sluice.server.config.Match#keyEntries()}), so the values matching it share one bucket. Keys over the store's {@value Permit#MAX_KEY_LENGTH}-character bound are replaced by
 * their SHA-256.
 */
final class StoreKeys {
    private StoreKeys() {}

    /** {@code domain|key=value|key=value}, with {@code \ | =} escaped; SHA-256 when over the store's bound. */
    static String storeKey(String domain, List<Entry> entries) {
        StringBuilder sb = new StringBuilder(domain.length() + 16 * entries.size());
        escape(sb, domain);
        for (Entry e : entries) {
            sb.append('|');
            escape(sb, e.key());
            sb.append('=');
            escape(sb, e.value());
        }
        if (sb.length() <= Permit.MAX_KEY_LENGTH) {
            return sb.toString();
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
            return domain.length() > 256
                    ? "#" + HexFormat.of().formatHex(h)
                    : domain + "|#" + HexFormat.of().formatHex(h);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void escape(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' || c == '|' || c == '=') {
                sb.append('\\');
            }
            sb.append(c);
        }
    }
}
