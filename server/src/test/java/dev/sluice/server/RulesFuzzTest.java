package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.RuleSet;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Fuzzes the YAML rules parser ({@link RuleSet#parse}, which the server, {@code sluice validate} and the hot reload
 * use) with random text, mutations of every valid rules file in the tests, and hostile structures (deep nesting,
 * recursive and amplifying aliases, huge scalars, tags). Each parse must end within {@link #BUDGET_MS} with either
 * rules or a {@link ConfigException} whose every problem is {@code file:line: message} — never another exception,
 * a stack overflow or a hang.
 *
 * <p>Tries per property: jqwik's default from {@code junit-platform.properties}; more with
 * {@code -Djqwik.tries.default=20000}.
 */
class RulesFuzzTest {
    static final long BUDGET_MS = 2_000;
    /** {@code test:12: message}: the source, a line number, then something to read. */
    static final Pattern PROBLEM = Pattern.compile("test:[1-9]\\d*: \\S.*", Pattern.DOTALL);

    static final List<String> CORPUS = List.of(
            "sluice-example.yaml",
            "sluice-algorithms.yaml",
            "envoy/example1.yaml",
            "envoy/example2.yaml",
            "envoy/example3.yaml",
            "envoy/example4.yaml",
            "envoy/example5.yaml",
            "envoy/example6.yaml",
            "envoy/example7.yaml",
            "envoy/example8.yaml",
            "envoy/example9.yaml",
            // envoyproxy/ratelimit's own files: every key of its loader (wildcards, share_threshold, metadata, …)
            "envoy-upstream/examples/ratelimit/config/example.yaml",
            "envoy-upstream/test/integration/runtime/current/ratelimit/config/share_threshold.yaml",
            "envoy-upstream/test/config/share_threshold.yaml",
            "envoy-upstream/test/config/wildcard.yaml",
            "envoy-upstream/test/config/metadata.yaml",
            "envoy-upstream/README-examples/example11.yaml",
            "envoy-upstream/README-examples/example14.yaml",
            "envoy-upstream/README-examples/example16.yaml");
    /** YAML's sharp edges, spliced into lines and bytes. */
    static final List<String> WORDS = List.of(
            ": ",
            "- ",
            "  ",
            "\t",
            "---",
            "...",
            "&a ",
            "*a",
            "<<: *a",
            "!!binary ",
            "!!python/object/apply:os.system ['x']",
            "!!java.io.File ",
            "!<tag:yaml.org,2002:str> ",
            "? ",
            "| ",
            "> ",
            "'",
            "\"",
            "\\",
            "#",
            "{",
            "}",
            "[",
            "]",
            ",",
            "~",
            "null",
            "true",
            "yes",
            "off",
            "0",
            "-1",
            "0x1F",
            "1e9",
            "9999999999999999999",
            "1_000",
            "0o17",
            ".inf",
            "unit: fortnight",
            "window: 0s",
            "burst: -1",
            "requests_per_unit: 0",
            "algorithm: sliding_log",
            "requests_per_unit: 10001",
            "unlimited: true",
            "shadow_mode: maybe",
            "replaces:\n  - name: x",
            "descriptors:",
            "key: k",
            "value: v",
            "domain: d",
            "share_threshold: true",
            "value_to_metric: true",
            "quota_mode: true",
            "detailed_metric: true",
            "semantics: strict",
            "semantics: loose",
            "value: a*b**c",
            "key: '*'",
            "metadata: {a: [1, 2.5, x, ~]}",
            "metadata: &m {a: *m}",
            "metadata: !!binary aGk=",
            "metadata:\n  <<: {m: 1}\n  ? [k]\n  : v",
            "%YAML 1.1\n",
            "%TAG ! tag:x,2000:\n",
            "\uFEFF",
            "\u0000",
            "\u0085",
            "\u2028",
            "\uD800");

    static final ExecutorService PARSER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(null, r, "rules-fuzz", 1 << 20); // a small stack, so deep recursion shows early
        t.setDaemon(true);
        return t;
    });

    @AfterContainer
    static void stop() {
        PARSER.shutdownNow();
    }

    @Property
    void randomTextIsRulesOrAClearProblem(@ForAll long seed) {
        Random rnd = new Random(seed);
        StringBuilder sb = new StringBuilder();
        int parts = rnd.nextInt(30);
        for (int i = 0; i < parts; i++) {
            sb.append(rnd.nextInt(3) == 0 ? Mutations.text(rnd, 20) : WORDS.get(rnd.nextInt(WORDS.size())));
            if (rnd.nextInt(3) == 0) {
                sb.append('\n').append(" ".repeat(rnd.nextInt(8)));
            }
        }
        parsesOrExplains(sb.toString());
    }

    @Property
    void mutatedRulesFilesAreRulesOrAClearProblem(@ForAll long seed) {
        Random rnd = new Random(seed);
        String valid = TestServer.resource(CORPUS.get(rnd.nextInt(CORPUS.size())));
        String yaml = rnd.nextBoolean() ? mutateLines(valid, rnd, 1 + rnd.nextInt(4)) : valid;
        if (rnd.nextBoolean()) {
            yaml = new String(
                    Mutations.mutate(yaml.getBytes(StandardCharsets.UTF_8), rnd, 1 + rnd.nextInt(5), WORDS),
                    StandardCharsets.UTF_8);
        }
        parsesOrExplains(yaml);
    }

    @Property
    void deepNestingIsAProblemNotAStackOverflow(@ForAll @IntRange(min = 1, max = 5000) int depth, @ForAll long seed) {
        Random rnd = new Random(seed);
        String yaml = switch (rnd.nextInt(4)) {
            case 0 -> "domain: d\ndescriptors: " + "[".repeat(depth) + "]".repeat(rnd.nextInt(depth + 1));
            case 1 -> "domain: d\ndescriptors: " + "{a: ".repeat(depth) + "x" + "}".repeat(rnd.nextInt(depth + 1));
            case 2 -> nestedDescriptors(Math.min(depth, 300), rnd.nextBoolean());
            default -> "domain: d\ndescriptors:\n" + "- ".repeat(Math.min(depth, 2000)) + "key: k";
        };
        parsesOrExplains(yaml);
    }

    @Property
    void hostileAliasesAreRefusedQuickly(
            @ForAll @IntRange(min = 1, max = 12) int levels,
            @ForAll @IntRange(min = 2, max = 10) int fanOut,
            @ForAll long seed) {
        Random rnd = new Random(seed);
        String yaml = switch (rnd.nextInt(4)) {
            case 0 -> billionLaughs(levels, fanOut);
            case 1 -> recursiveDescriptors(rnd);
            case 2 -> scalarAliasAmplification(levels * 50, fanOut * 30_000 / levels);
            default -> mergeKeyBomb(levels, fanOut);
        };
        parsesOrExplains(yaml);
    }

    @Example
    void theYamlBillionLaughsIsRefusedQuicklyWithALine() {
        ConfigException e = parsesOrExplains(billionLaughs(9, 10));
        assertThat(e).as("a billion laughs is not rules").isNotNull();
        assertThat(e.getMessage()).contains("alias");
    }

    // ---- the check

    /** Parses within the budget; returns the refusal (null when the rules were valid) after checking its shape. */
    static ConfigException parsesOrExplains(String yaml) {
        Future<ConfigException> f = PARSER.submit(() -> {
            try {
                RuleSet.parse("test", yaml);
                return null;
            } catch (ConfigException e) {
                return e;
            }
        });
        ConfigException e;
        try {
            e = f.get(BUDGET_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException t) {
            f.cancel(true);
            throw new AssertionError("no answer within " + BUDGET_MS + " ms for:\n" + abbreviate(yaml));
        } catch (ExecutionException x) {
            throw new AssertionError(
                    "not a ConfigException but " + x.getCause() + " for:\n" + abbreviate(yaml), x.getCause());
        } catch (InterruptedException x) {
            throw new IllegalStateException(x);
        }
        if (e != null) {
            assertThat(e.problems()).as("problems for:\n%s", abbreviate(yaml)).isNotEmpty();
            for (String p : e.problems()) {
                assertThat(p).as("problem for:\n%s", abbreviate(yaml)).matches(PROBLEM);
                assertThat(p.length())
                        .as("a readable problem: %s", abbreviate(p))
                        .isLessThan(1_000);
            }
            assertThat(e.getMessage().length())
                    .as("the whole refusal stays readable")
                    .isLessThan(200_000);
        }
        return e;
    }

    static String abbreviate(String s) {
        return s.length() <= 2_000 ? s : s.substring(0, 2_000) + "… (" + s.length() + " characters)";
    }

    // ---- inputs

    /** Deletes, duplicates, swaps, re-indents or splices a word into whole lines. */
    static String mutateLines(String yaml, Random rnd, int count) {
        List<String> lines = new ArrayList<>(Arrays.asList(yaml.split("\n", -1)));
        for (int n = 0; n < count && !lines.isEmpty(); n++) {
            int i = rnd.nextInt(lines.size());
            switch (rnd.nextInt(6)) {
                case 0 -> lines.remove(i);
                case 1 -> lines.add(i, lines.get(i));
                case 2 -> {
                    int j = rnd.nextInt(lines.size());
                    String t = lines.get(i);
                    lines.set(i, lines.get(j));
                    lines.set(j, t);
                }
                case 3 -> lines.set(i, " ".repeat(rnd.nextInt(9)) + lines.get(i).stripLeading());
                case 4 -> {
                    String l = lines.get(i);
                    int c = l.indexOf(": ");
                    String w = WORDS.get(rnd.nextInt(WORDS.size()));
                    lines.set(i, c < 0 ? l + w : l.substring(0, c + 2) + w);
                }
                default -> {
                    String l = lines.get(i);
                    int at = l.isEmpty() ? 0 : rnd.nextInt(l.length());
                    lines.set(i, l.substring(0, at) + WORDS.get(rnd.nextInt(WORDS.size())) + l.substring(at));
                }
            }
        }
        return String.join("\n", lines);
    }

    /** Descriptors nested {@code depth} levels, each with a key (and at the bottom a limit). */
    static String nestedDescriptors(int depth, boolean flow) {
        if (flow) {
            return "domain: d\ndescriptors: " + "[{key: k, descriptors: ".repeat(depth)
                    + "[{key: z, rate_limit: {unit: second, requests_per_unit: 1}}]" + "}]".repeat(depth);
        }
        StringBuilder sb = new StringBuilder("domain: d\ndescriptors:\n");
        for (int i = 0; i < depth; i++) {
            String pad = "  ".repeat(i);
            sb.append(pad).append("- key: k").append(i).append('\n').append(pad).append("  descriptors:\n");
        }
        sb.append("  ".repeat(depth))
                .append("- key: z\n")
                .append("  ".repeat(depth))
                .append("  rate_limit: {unit: second, requests_per_unit: 1}\n");
        return sb.toString();
    }

    /** The YAML billion laughs: each level a list of {@code fanOut} aliases to the previous one. */
    static String billionLaughs(int levels, int fanOut) {
        StringBuilder sb = new StringBuilder("domain: d\nlol0: &l0 [\"lol\"]\n");
        for (int i = 1; i <= levels; i++) {
            sb.append("lol").append(i).append(": &l").append(i).append(" [");
            for (int j = 0; j < fanOut; j++) {
                sb.append(j == 0 ? "" : ", ").append("*l").append(i - 1);
            }
            sb.append("]\n");
        }
        return sb.append("descriptors: *l").append(levels).append('\n').toString();
    }

    /** A descriptor list that contains itself through an alias: walking it naively never ends. */
    static String recursiveDescriptors(Random rnd) {
        return switch (rnd.nextInt(3)) {
            case 0 -> "domain: d\ndescriptors: &x\n  - key: k\n    descriptors: *x\n";
            case 1 -> "domain: d\ndescriptors:\n  - &y\n    key: k\n    descriptors:\n      - *y\n";
            default -> """
                domain: d
                descriptors:
                  - key: k
                    rate_limit: &r
                      unit: second
                      requests_per_unit: 1
                      replaces: [*r]
                """;
        };
    }

    /** One big scalar, aliased many times where problems quote it: the messages must not multiply its size. */
    static String scalarAliasAmplification(int times, int size) {
        StringBuilder sb = new StringBuilder("domain: d\nbig: &s ")
                .append("x".repeat(Math.max(1, size)))
                .append("\ndescriptors:\n");
        for (int i = 0; i < times; i++) {
            sb.append("  - key: *s\n");
        }
        return sb.toString();
    }

    /** Merge keys ({@code <<}) of merge keys: a mapping version of the billion laughs. */
    static String mergeKeyBomb(int levels, int fanOut) {
        StringBuilder sb = new StringBuilder("domain: d\nm0: &m0 {a: 1}\n");
        for (int i = 1; i <= levels; i++) {
            sb.append("m").append(i).append(": &m").append(i).append(" {<<: [");
            for (int j = 0; j < fanOut; j++) {
                sb.append(j == 0 ? "" : ", ").append("*m").append(i - 1);
            }
            sb.append("]}\n");
        }
        return sb.append("descriptors: [*m").append(levels).append("]\n").toString();
    }
}
