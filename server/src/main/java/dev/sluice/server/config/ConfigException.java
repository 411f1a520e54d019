package dev.sluice.server.config;

import java.util.List;

/**
 * A rules file that cannot be used. The message lists every problem found, each as {@code file:line: what is
 * wrong and how to fix it}, so one run of {@code sluice validate} shows them all.
 */
public final class ConfigException extends Exception {
    private final List<String> problems;

    public ConfigException(List<String> problems) {
        super(String.join("\n", problems));
        this.problems = List.copyOf(problems);
    }

    public ConfigException(String problem) {
        this(List.of(problem));
    }

    /** Each problem on its own, {@code file:line: message}. */
    public List<String> problems() {
        return problems;
    }
}
