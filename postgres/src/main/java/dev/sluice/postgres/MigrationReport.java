package dev.sluice.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a migration did, read from the database's catalog before and after it ran: the objects it created and the
 * functions whose definition it changed. Empty when the schema was already up to date (the migration files are
 * idempotent, so running them again changes nothing).
 *
 * @param schema  the schema migrated
 * @param created objects that did not exist before, as {@code kind name} (e.g. {@code table sluice_bucket},
 *                {@code function sluice_bucket_acquire(...)}), in catalog order
 * @param updated objects that existed with another definition (functions of an older Sluice), same form
 */
public record MigrationReport(String schema, List<String> created, List<String> updated) {

    public MigrationReport {
        created = List.copyOf(created);
        updated = List.copyOf(updated);
    }

    /** True when the schema was already up to date: the migration created and changed nothing. */
    public boolean nothingToDo() {
        return created.isEmpty() && updated.isEmpty();
    }

    /**
     * One sentence for people, e.g. {@code created 5 tables (sluice_bucket, sluice_in_flight, sluice_log,
     * sluice_pending, sluice_window), 10 indexes and 27 functions in schema public} or {@code nothing to do: schema
     * public is up to date}.
     */
    public String describe() {
        if (nothingToDo()) {
            return "nothing to do: the Sluice schema in " + schema + " was already up to date";
        }
        List<String> parts = new ArrayList<>();
        if (!created.isEmpty()) {
            parts.add("created " + summary(created));
        }
        if (!updated.isEmpty()) {
            parts.add("updated " + summary(updated));
        }
        return String.join("; ", parts) + " in schema " + schema;
    }

    /** {@code 3 tables (a, b, c), 3 indexes and 15 functions}: tables and the schema by name, the rest counted. */
    private static String summary(List<String> objects) {
        Map<String, List<String>> byKind = new TreeMap<>(
                (a, b) -> Integer.compare(rank(a), rank(b)) != 0 ? Integer.compare(rank(a), rank(b)) : a.compareTo(b));
        for (String o : objects) {
            int space = o.indexOf(' ');
            byKind.computeIfAbsent(o.substring(0, space), k -> new ArrayList<>())
                    .add(o.substring(space + 1));
        }
        List<String> parts = new ArrayList<>();
        byKind.forEach((kind, names) -> {
            String counted = names.size() + " " + kind + (names.size() == 1 ? "" : kind.endsWith("x") ? "es" : "s");
            parts.add(
                    kind.equals("schema")
                            ? "schema " + names.get(0)
                            : kind.equals("table") ? counted + " (" + String.join(", ", names) + ")" : counted);
        });
        if (parts.size() == 1) {
            return parts.get(0);
        }
        return String.join(", ", parts.subList(0, parts.size() - 1)) + " and " + parts.get(parts.size() - 1);
    }

    private static int rank(String kind) {
        int i = List.of("schema", "table", "index", "function").indexOf(kind);
        return i < 0 ? 99 : i;
    }
}
