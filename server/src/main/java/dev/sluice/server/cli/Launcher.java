package dev.sluice.server.cli;

import java.util.Arrays;

/**
 * The jar's entry point. {@code sluice check} goes straight to {@link CheckCommand}, whose start-up is most of its
 * time; everything else goes to {@link SluiceCommand}, whose command line loads every command (and, with
 * {@code serve}, logging) first.
 */
public final class Launcher {
    private Launcher() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("check")) {
            System.exit(CheckCommand.run(Arrays.copyOfRange(args, 1, args.length)));
        }
        SluiceCommand.main(args);
    }
}
