package dev.sluice.server.cli;

import dev.sluice.server.log.LogFormat;
import dev.sluice.server.log.Logging;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/** What {@code sluice serve} does with a mistake picocli catches: it logs it, like everything else it says. */
final class ServeErrors {
    private ServeErrors() {}

    /**
     * Makes {@code sluice serve}'s own mistakes log lines too, in the format asked for: a bad option
     * ({@code event=start_refused}, exit 2) and an exception out of {@link ServeCommand#call()}
     * ({@code event=serve_failed}, with its stack trace, exit 1), which picocli would print as usage text or a bare
     * stack trace. Other commands keep picocli's handling. {@code root} is the command line {@code execute} is
     * called on: picocli asks its handlers, whichever command failed.
     */
    static CommandLine logErrors(CommandLine root) {
        CommandLine.IParameterExceptionHandler usage = root.getParameterExceptionHandler();
        CommandLine.IExecutionExceptionHandler failure = root.getExecutionExceptionHandler();
        return root.setParameterExceptionHandler((e, args) -> {
                    if (!(e.getCommandLine().getCommand() instanceof ServeCommand)) {
                        return usage.handleParseException(e, args);
                    }
                    Logging.start(formatIn(args));
                    return ServeCommand.refuse(
                            e.getCommandLine().getCommandSpec().exitCodeOnInvalidInput(),
                            e.getMessage() + " ('sluice serve --help' lists the options)");
                })
                .setExecutionExceptionHandler((e, cl, parsed) -> {
                    if (!(cl.getCommand() instanceof ServeCommand)) {
                        return failure.handleExecutionException(e, cl, parsed);
                    }
                    LoggerFactory.getLogger(ServeCommand.class)
                            .atError()
                            .addKeyValue("event", "serve_failed")
                            .setCause(e)
                            .log();
                    return cl.getCommandSpec().exitCodeOnExecutionException();
                });
    }

    /** The format {@code args} ask for, read before picocli could parse them; logfmt when they ask for none. */
    private static LogFormat formatIn(String[] args) {
        String text = System.getenv("LOG_FORMAT");
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--log-format=")) {
                text = args[i].substring("--log-format=".length());
            } else if (args[i].equals("--log-format") && i + 1 < args.length) {
                text = args[i + 1];
            }
        }
        try {
            return LogFormat.parse("--log-format", text);
        } catch (IllegalArgumentException unknown) {
            return LogFormat.LOGFMT;
        }
    }
}
