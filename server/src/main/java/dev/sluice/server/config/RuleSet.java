package dev.sluice.server.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * All loaded rules, by domain. Immutable: a reload builds a new set and swaps it in whole, so a request sees
 * either the old rules or the new ones, never a mix.
 *
 * <p>Rules come from files or directories (every {@code *.yaml} and {@code *.yml} in it, in name order, like
 * envoy's runtime directory). A domain may be defined once across all of them.
 */
public final class RuleSet {
    /** The example served by {@code sluice serve} when no {@code --config} is given and no sluice.yaml is beside it. */
    public static final String BUILTIN_EXAMPLE = "sluice-example.yaml";

    private final Map<String, DomainRules> domains;
    private final List<Path> files;

    private RuleSet(Map<String, DomainRules> domains, List<Path> files) {
        this.domains = Collections.unmodifiableMap(new LinkedHashMap<>(domains));
        this.files = List.copyOf(files);
    }

    public @Nullable DomainRules domain(String name) {
        return domains.get(name);
    }

    public Map<String, DomainRules> domains() {
        return domains;
    }

    /** The files read (empty for the built-in example); the reloader watches their directories. */
    public List<Path> files() {
        return files;
    }

    public int ruleCount() {
        return domains.values().stream().mapToInt(d -> d.rules().size()).sum();
    }

    /** Loads files and directories; throws with every problem in every file. */
    public static RuleSet load(List<Path> paths) throws ConfigException {
        List<Path> files = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.list(p)) {
                    s.filter(f -> {
                                String n = f.getFileName().toString();
                                return !n.startsWith(".") && (n.endsWith(".yaml") || n.endsWith(".yml"));
                            })
                            .sorted()
                            .forEach(files::add);
                } catch (IOException e) {
                    problems.add(p + ": cannot list the directory: " + e.getMessage());
                }
            } else if (Files.isRegularFile(p)) {
                files.add(p);
            } else {
                problems.add(p + ": no such file or directory");
            }
        }
        if (files.isEmpty() && problems.isEmpty()) {
            problems.add(paths + ": no *.yaml or *.yml files found");
        }
        Map<String, DomainRules> domains = new LinkedHashMap<>();
        for (Path f : files) {
            try (Reader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
                add(domains, RulesParser.parse(f.toString(), r), problems);
            } catch (ConfigException e) {
                problems.addAll(e.problems());
            } catch (IOException e) {
                problems.add(f + ": cannot read: " + e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
        return new RuleSet(domains, files);
    }

    /** Parses rules from a string (tests, {@code sluice check --rules}). */
    public static RuleSet parse(String source, String yaml) throws ConfigException {
        Map<String, DomainRules> domains = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        add(domains, RulesParser.parse(source, new StringReader(yaml)), problems);
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
        return new RuleSet(domains, List.of());
    }

    /** The built-in example rules. */
    public static RuleSet builtinExample() {
        try (InputStream in = RuleSet.class.getResourceAsStream("/" + BUILTIN_EXAMPLE)) {
            if (in == null) {
                throw new IllegalStateException(BUILTIN_EXAMPLE + " is missing from the jar");
            }
            Map<String, DomainRules> domains = new LinkedHashMap<>();
            List<String> problems = new ArrayList<>();
            add(
                    domains,
                    RulesParser.parse(
                            "(built-in) " + BUILTIN_EXAMPLE, new InputStreamReader(in, StandardCharsets.UTF_8)),
                    problems);
            return new RuleSet(domains, List.of());
        } catch (IOException | ConfigException e) {
            throw new IllegalStateException("the built-in example rules do not load: " + e.getMessage(), e);
        }
    }

    private static void add(Map<String, DomainRules> domains, List<DomainRules> parsed, List<String> problems) {
        for (DomainRules d : parsed) {
            DomainRules before = domains.putIfAbsent(d.domain(), d);
            if (before != null) {
                problems.add(d.source() + ": domain '" + d.domain() + "' is already defined at " + before.source()
                        + ": each domain lives in one file; merge them or rename one");
            }
        }
    }
}
