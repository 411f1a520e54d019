package dev.sluice.server.cli;

import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.RuleSet;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code sluice validate FILE|DIR...}: exit 0 and a summary when the rules load, 1 and every problem when not. */
@Command(
        name = "validate",
        mixinStandardHelpOptions = true,
        description =
                "Check rules files (envoyproxy/ratelimit YAML + Sluice keys); print every problem with file:line.")
final class ValidateCommand implements Callable<Integer> {

    @Parameters(arity = "1..*", paramLabel = "FILE|DIR", description = "Rules files, or directories of *.yaml")
    List<Path> paths;

    @Override
    public Integer call() {
        try {
            RuleSet rs = RuleSet.load(paths);
            for (DomainRules d : rs.domains().values()) {
                System.out.println(
                        "ok  domain " + d.domain() + ": " + d.rules().size() + " rules (" + d.source() + ")");
            }
            return 0;
        } catch (ConfigException e) {
            e.problems().forEach(System.err::println);
            System.err.println(e.problems().size() + " problem(s): the rules were not loaded");
            return 1;
        }
    }
}
