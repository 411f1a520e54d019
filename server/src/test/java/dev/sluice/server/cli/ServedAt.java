package dev.sluice.server.cli;

import dev.sluice.tck.Eventually;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
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
    static String http(Path output, Process serve, Duration guard) throws IOException {
        AtomicReference<String> served = new AtomicReference<>();
        try {
            Eventually.await(guard, "sluice serve's banner in " + output, () -> {
                String text = read(output);
                Matcher m = HTTP.matcher(text);
                if (m.find()) {
                    served.set(m.group(1));
                    return true;
                }
                if (!serve.isAlive()) {
                    throw new IllegalStateException(
                            "serve exited with " + serve.exitValue() + " before it served: " + text);
                }
                return false;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + read(output), e);
        }
        return served.get();
    }

    private static String read(Path output) throws IOException {
        return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
    }
}
