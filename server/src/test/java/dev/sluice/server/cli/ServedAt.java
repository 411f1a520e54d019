package dev.sluice.server.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a {@code sluice serve} process started with {@code --http 127.0.0.1:0} serves HTTP, read from its banner.
 * Port 0 lets the service bind a free port itself: a port chosen by the test beforehand could be taken by another
 * process (another build's test on the same machine) before the service binds it.
 */
final class ServedAt {
    private static final Pattern HTTP = Pattern.compile("^  HTTP  (http://127\\.0\\.0\\.1:\\d+)", Pattern.MULTILINE);

    private ServedAt() {}

    /**
     * The base URL ({@code http://127.0.0.1:<port>}) of the banner that {@code serve} writes to {@code output}, once
     * it is there; {@code guard} is a hang guard only. Fails at once, with its output, when the process exits first.
     */
    static String http(Path output, Process serve, Duration guard) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + guard.toNanos();
        while (true) {
            String text = Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
            Matcher m = HTTP.matcher(text);
            if (m.find()) {
                return m.group(1);
            }
            if (!serve.isAlive()) {
                throw new AssertionError("serve exited with " + serve.exitValue() + " before it served: " + text);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("serve wrote no banner within " + guard + ": " + text);
            }
            Thread.sleep(10);
        }
    }
}
