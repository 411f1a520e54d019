package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.decision.CheckRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@link CheckJson}'s fast path: the common request (domain, hits, descriptors of string entries, no caller-sent
 * limit) read as a stream of tokens, without a tree: half the cost of the tree. Anything else, and anything wrong,
 * is {@code null}: the tree then reads it and names the problem, so both ways accept exactly the same bodies.
 */
final class PlainCheckJson {
    private PlainCheckJson() {}

    /** The request, or null when the tree must read it. */
    static @Nullable CheckRequest parse(byte[] body, int maxDescriptors) {
        try (JsonParser p = CheckJson.MAPPER.getFactory().createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String domain = null;
            long hits = -1;
            List<List<Entry>> descriptors = null;
            List<Long> descriptorHits = null;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "domain" -> {
                        if (v != JsonToken.VALUE_STRING) {
                            return null;
                        }
                        domain = p.getText();
                    }
                    case "hits", "hits_addend" -> {
                        if (hits >= 0 || (hits = plainHits(p, v)) < 0) {
                            return null;
                        }
                    }
                    case "descriptors" -> {
                        if (v != JsonToken.START_ARRAY) {
                            return null;
                        }
                        descriptors = new ArrayList<>(2);
                        descriptorHits = new ArrayList<>(2);
                        while ((v = p.nextToken()) == JsonToken.START_OBJECT) {
                            if (descriptors.size() == maxDescriptors
                                    || !plainDescriptor(p, descriptors, descriptorHits)) {
                                return null;
                            }
                        }
                        if (v != JsonToken.END_ARRAY) {
                            return null;
                        }
                    }
                    default -> {
                        return null;
                    }
                }
            }
            if (t != JsonToken.END_OBJECT
                    || p.nextToken() != null
                    || domain == null
                    || domain.isEmpty()
                    || descriptors == null
                    || descriptorHits == null
                    || descriptors.isEmpty()) {
                return null;
            }
            long requestHits = hits < 0 ? 1 : hits;
            List<CheckRequest.Descriptor> out = new ArrayList<>(descriptors.size());
            for (int i = 0; i < descriptors.size(); i++) {
                long h = descriptorHits.get(i);
                out.add(new CheckRequest.Descriptor(descriptors.get(i), h < 0 ? requestHits : h, null));
            }
            return new CheckRequest(domain, out);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** One descriptor object after its '{': entries of string keys and values, and hits; false for anything else. */
    private static boolean plainDescriptor(JsonParser p, List<List<Entry>> descriptors, List<Long> descriptorHits)
            throws IOException {
        List<Entry> entries = null;
        long hits = -1;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "entries" -> {
                    if (v != JsonToken.START_ARRAY) {
                        return false;
                    }
                    entries = new ArrayList<>(2);
                    while ((v = p.nextToken()) == JsonToken.START_OBJECT) {
                        String key = null;
                        String value = "";
                        while ((v = p.nextToken()) == JsonToken.FIELD_NAME) {
                            String f = p.currentName();
                            if (p.nextToken() != JsonToken.VALUE_STRING) {
                                return false;
                            }
                            switch (f) {
                                case "key" -> key = p.getText();
                                case "value" -> value = p.getText();
                                default -> {
                                    return false;
                                }
                            }
                        }
                        if (v != JsonToken.END_OBJECT || key == null || key.isEmpty()) {
                            return false;
                        }
                        entries.add(new Entry(key, value));
                    }
                    if (v != JsonToken.END_ARRAY || entries.isEmpty()) {
                        return false;
                    }
                }
                case "hits", "hits_addend" -> {
                    if (hits >= 0 || (hits = plainHits(p, v)) < 0) {
                        return false;
                    }
                }
                default -> {
                    return false;
                }
            }
        }
        if (t != JsonToken.END_OBJECT || entries == null) {
            return false;
        }
        descriptors.add(List.copyOf(entries));
        descriptorHits.add(hits);
        return true;
    }

    /** A hits value the tree would accept, or -1. */
    private static long plainHits(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            return -1;
        }
        long h = p.getLongValue();
        return h >= 0 && h <= CheckJson.MAX_HITS ? h : -1;
    }
}
