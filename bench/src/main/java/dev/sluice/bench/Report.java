package dev.sluice.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns one JMH run's CSV ({@code -rf csv}, with {@code -prof gc}) into the Markdown tables of
 * {@code bench/README.md}: scores, allocation per call, the allowed share, every ratio against the anchors
 * measured in the same run, and the targets marked met or not met.
 *
 * <pre>java -cp bench/target/benchmarks.jar dev.sluice.bench.Report results.csv</pre>
 */
public final class Report {
    private Report() {
    }

    /** One benchmark × mix: its primary score and the secondary results JMH printed under it. */
    private static final class Row {
        double score = Double.NaN;
        double error = Double.NaN;
        double allocNorm = Double.NaN;
        double allowed = Double.NaN;
        double denied = Double.NaN;

        double allowedShare() {
            return allowed / (allowed + denied);
        }
    }

    private final Map<String, Row> rows = new LinkedHashMap<>();

    private Row row(String benchmark, String mix) {
        return rows.computeIfAbsent(benchmark + "|" + mix, k -> new Row());
    }

    private Row get(String group, String method, String mix) {
        return rows.get("dev.sluice.bench." + group + "." + method + "|" + mix);
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: java -cp bench/target/benchmarks.jar dev.sluice.bench.Report results.csv");
            System.exit(2);
        }
        Report r = new Report();
        r.read(Path.of(args[0]));
        r.print();
    }

    private void read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        for (String line : lines.subList(1, lines.size())) {
            List<String> f = split(line);
            String name = f.get(0);
            double score = parse(f.get(4));
            double error = parse(f.get(5));
            String mix = f.size() > 7 && !f.get(7).isEmpty() ? f.get(7) : "N/A";
            int colon = name.indexOf(':');
            if (colon < 0) {
                Row row = row(name, mix);
                row.score = score;
                row.error = error;
                continue;
            }
            Row row = row(name.substring(0, colon), mix);
            switch (name.substring(colon + 1)) {
                case "gc.alloc.rate.norm" -> row.allocNorm = score;
                case "allowed" -> row.allowed = score;
                case "denied" -> row.denied = score;
                default -> {
                }
            }
        }
    }

    private static List<String> split(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (char ch : line.toCharArray()) {
            if (ch == '"') {
                quoted = !quoted;
            } else if (ch == ',' && !quoted) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(ch);
            }
        }
        out.add(cur.toString());
        return out;
    }

    private static double parse(String s) {
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static final String[] HOT = {"sluiceTokenBucket", "sluiceGcra", "bucket4j", "bucket4jProbe", "guava",
            "resilience4j", "casGcraFloor"};
    private static final String[] MIXES = {"ADMITTING", "DENYING"};

    private void print() {
        Row decision = get("DecisionAlloc", "newDecision", "N/A");
        double budget = decision == null ? Double.NaN : decision.allocNorm;

        System.out.println("### Hot key: ops/µs (± 99.9% error), bytes allocated per call, share of calls allowed\n");
        System.out.println("| contender | mix | 1 thread ops/µs | B/op | allowed | 2 threads ops/µs | B/op | allowed |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
        for (String mix : MIXES) {
            for (String m : HOT) {
                Row one = get("HotKey1Thread", m, mix);
                Row two = get("HotKey2Threads", m, mix);
                if (one == null && two == null) {
                    continue;
                }
                System.out.printf("| %s | %s | %s | %s | %s | %s | %s | %s |%n", m, mix.toLowerCase(Locale.ROOT),
                        score(one), alloc(one), share(one), score(two), alloc(two), share(two));
            }
        }

        System.out.println("\n### Hot key: Sluice ÷ anchor (same run)\n");
        System.out.println("| Sluice | mix | threads | ÷ Bucket4j | ÷ Bucket4j probe | ÷ Guava | ÷ Resilience4j | ÷ CAS floor |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
        for (String sluice : new String[] {"sluiceTokenBucket", "sluiceGcra"}) {
            for (String mix : MIXES) {
                for (String group : new String[] {"HotKey1Thread", "HotKey2Threads"}) {
                    Row s = get(group, sluice, mix);
                    if (s == null) {
                        continue;
                    }
                    System.out.printf("| %s | %s | %d | %s | %s | %s | %s | %s |%n", sluice,
                            mix.toLowerCase(Locale.ROOT), group.equals("HotKey1Thread") ? 1 : 2,
                            ratio(s, get(group, "bucket4j", mix)), ratio(s, get(group, "bucket4jProbe", mix)),
                            ratio(s, get(group, "guava", mix)), ratio(s, get(group, "resilience4j", mix)),
                            ratio(s, get(group, "casGcraFloor", mix)));
                }
            }
        }

        System.out.println("\n### 1,000,000 random keys: ops/µs, bytes allocated per call (key included), allowed\n");
        System.out.println("| contender | mix | 1 thread ops/µs | B/op | allowed | 2 threads ops/µs | B/op | allowed | Sluice ÷ Bucket4j, 1 / 2 threads |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|");
        for (String mix : new String[] {"ADMITTING", "DENYING", "N/A"}) {
            for (String m : new String[] {"sluiceTokenBucket", "bucket4j", "keyOnly"}) {
                Row one = get("RandomKeys1Thread", m, mix);
                Row two = get("RandomKeys2Threads", m, mix);
                if (one == null && two == null) {
                    continue;
                }
                String ratios = m.equals("sluiceTokenBucket")
                        ? ratio(one, get("RandomKeys1Thread", "bucket4j", mix)) + " / "
                                + ratio(two, get("RandomKeys2Threads", "bucket4j", mix))
                        : "";
                System.out.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", m,
                        mix.equals("N/A") ? "—" : mix.toLowerCase(Locale.ROOT), score(one), alloc(one), share(one),
                        score(two), alloc(two), share(two), ratios);
            }
        }

        System.out.printf("%n### Targets (issue 2), judged on this run%n%n");
        System.out.println("| target | mix | measured | met? |");
        System.out.println("|---|---|---:|---|");
        for (String mix : MIXES) {
            String lm = mix.toLowerCase(Locale.ROOT);
            target("hot key, 1 thread: token bucket ≥ 1.3× Bucket4j", lm,
                    q(get("HotKey1Thread", "sluiceTokenBucket", mix), get("HotKey1Thread", "bucket4j", mix)), 1.3);
            target("hot key, 2 threads: token bucket ≥ 1.5× Bucket4j", lm,
                    q(get("HotKey2Threads", "sluiceTokenBucket", mix), get("HotKey2Threads", "bucket4j", mix)), 1.5);
            target("hot key, 2 threads: token bucket ≥ 2× Guava", lm,
                    q(get("HotKey2Threads", "sluiceTokenBucket", mix), get("HotKey2Threads", "guava", mix)), 2.0);
            target("1M keys, 2 threads: token bucket ≥ 2× Bucket4j+CHM", lm,
                    q(get("RandomKeys2Threads", "sluiceTokenBucket", mix), get("RandomKeys2Threads", "bucket4j", mix)),
                    2.0);
        }
        for (String mix : MIXES) {
            for (String group : new String[] {"HotKey1Thread", "HotKey2Threads"}) {
                Row s = get(group, "sluiceTokenBucket", mix);
                if (s == null) {
                    continue;
                }
                boolean met = s.allocNorm <= budget + 0.5;
                System.out.printf("| allocation ≤ one Decision (%.0f B): hot key, %s | %s | %.1f B/op | %s |%n", budget,
                        group.equals("HotKey1Thread") ? "1 thread" : "2 threads", mix.toLowerCase(Locale.ROOT),
                        s.allocNorm, Double.isNaN(budget) ? "?" : met ? "met" : "**not met**");
            }
            Row s = get("RandomKeys2Threads", "sluiceTokenBucket", mix);
            Row key = get("RandomKeys2Threads", "keyOnly", "N/A");
            if (s != null && key != null) {
                double own = s.allocNorm - key.allocNorm;
                System.out.printf("| allocation ≤ one Decision (%.0f B): 1M keys, 2 threads, minus the key's %.0f B | %s | %.1f B/op | %s |%n",
                        budget, key.allocNorm, mix.toLowerCase(Locale.ROOT), own,
                        Double.isNaN(budget) ? "?" : own <= budget + 0.5 ? "met" : "**not met**");
            }
        }
    }

    private static void target(String what, String mix, double measured, double goal) {
        System.out.printf("| %s | %s | %s | %s |%n", what, mix,
                Double.isNaN(measured) ? "—" : String.format("%.2f×", measured),
                Double.isNaN(measured) ? "not run" : measured >= goal ? "met" : "**not met**");
    }

    private static double q(Row a, Row b) {
        return a == null || b == null ? Double.NaN : a.score / b.score;
    }

    private static String ratio(Row a, Row b) {
        double v = q(a, b);
        return Double.isNaN(v) ? "—" : String.format("%.2f×", v);
    }

    private static String score(Row r) {
        if (r == null || Double.isNaN(r.score)) {
            return "—";
        }
        return Double.isNaN(r.error) ? String.format("%.2f", r.score) : String.format("%.2f ± %.2f", r.score, r.error);
    }

    private static String alloc(Row r) {
        return r == null || Double.isNaN(r.allocNorm) ? "—" : String.format("%.0f", r.allocNorm);
    }

    private static String share(Row r) {
        if (r == null || Double.isNaN(r.allowed) || Double.isNaN(r.denied)) {
            return "—";
        }
        double s = r.allowedShare();
        return s > 0.999 ? String.format("%.1f%%", 100 * s)
                : s < 0.001 ? String.format("%.4f%%", 100 * s) : String.format("%.1f%%", 100 * s);
    }
}
