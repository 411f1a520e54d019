package dev.sluice.server.cli;

import java.util.Arrays;

/**
 * The jar's entry point. {@code sluice check} goes straight to {@link CheckCommand}, whose start-up is most of its
 * time; everything else goes to {@link SluiceCommand}, whose command line loads every command (and, with
 * {@code serve}, logging) first.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("check")) {
            quietLogging();
            System.exit(CheckCommand.run(Arrays.copyOfRange(args, 1, args.length)));
        }
        SluiceCommand.main(args);
    }

    /**
     * {@code check} logs nothing, but {@link java.net.HttpURLConnection} asks the JDK's {@code System.Logger} whether
     * to, which the jar routes to SLF4J (slf4j-jdk-platform-logging), whose search would start logback: a third of the
     * classes a call loaded. SLF4J is told its provider instead, one that logs nothing, and not to say so.
     */
    private static void quietLogging() {
        if (System.getProperty("slf4j.provider") == null) {
            System.setProperty("slf4j.provider", "org.slf4j.helpers.NOP_FallbackServiceProvider");
        }
        if (System.getProperty("slf4j.internal.verbosity") == null) {
            System.setProperty("slf4j.internal.verbosity", "WARN");
        }
    }
}
