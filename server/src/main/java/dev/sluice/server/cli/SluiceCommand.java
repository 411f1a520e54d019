package dev.sluice.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code sluice}: the service's command line. {@code sluice} alone is {@code sluice serve}.
 */
@Command(
        name = "sluice",
        mixinStandardHelpOptions = true,
        versionProvider = SluiceCommand.Version.class,
        description = "Sluice rate-limit decision service: HTTP/JSON and Envoy's gRPC rate-limit protocol.",
        subcommands = {
            ServeCommand.class,
            CheckCommand.class,
            ValidateCommand.class,
            MigrateCommand.class,
            CommandLine.HelpCommand.class
        })
public final class SluiceCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        // no subcommand: serve with defaults
        int code = ServeErrors.logErrors(new CommandLine(new ServeCommand())).execute();
        if (code != 0) {
            System.exit(code);
        }
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, for tests: {@code commandLine().execute("validate", "rules.yaml")}. */
    public static CommandLine commandLine() {
        return ServeErrors.logErrors(new CommandLine(new SluiceCommand()));
    }

    /** The command line, for tests, with {@code serve} reading envoy's variables from {@code env}, not the process's. */
    static CommandLine commandLine(java.util.Map<String, String> env) {
        CommandLine c = commandLine();
        java.util.Objects.requireNonNull(c.getSubcommands().get("serve"), "serve")
                .setDefaultValueProvider(new EnvoyEnvironment(env));
        return c;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SluiceCommand.class.getPackage().getImplementationVersion();
            return new String[] {"sluice " + (v == null ? "development build" : v)};
        }
    }
}
