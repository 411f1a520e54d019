package dev.sluice.server;

import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hot reload: polls the configured paths (files, and the {@code *.yaml} files in configured directories) and
 * reloads when any file's size, modification time or identity changes, or a file appears or disappears.
 * Polling rather than a {@code WatchService} because it also sees the symlink swaps Kubernetes uses for
 * ConfigMaps and works the same on every filesystem.
 *
 * <p>A reload that fails validation keeps the rules in force and logs every problem with its file and line;
 * the next change is tried again.
 */
final class RulesWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RulesWatcher.class);

    private final List<Path> paths;
    private final DecisionService service;
    private final ScheduledExecutorService timer;
    private List<String> lastSeen;

    RulesWatcher(List<Path> paths, DecisionService service, Duration interval) {
        this.paths = List.copyOf(paths);
        this.service = service;
        this.lastSeen = fingerprint();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-rules-watcher");
            t.setDaemon(true);
            return t;
        });
        long ms = Math.max(50, interval.toMillis());
        ScheduledFuture<?> unused = timer.scheduleWithFixedDelay(this::poll, ms, ms, TimeUnit.MILLISECONDS);
    }

    private void poll() {
        try {
            List<String> now = fingerprint();
            if (Objects.equals(now, lastSeen)) {
                return;
            }
            lastSeen = now;
            reload();
        } catch (RuntimeException e) {
            log.atError().addKeyValue("event", "rules_watch_failed").setCause(e).log();
        }
    }

    /** Reloads now; returns true when the new rules were applied. */
    boolean reload() {
        try {
            RuleSet next = RuleSet.load(paths);
            service.rules(next);
            service.metrics().reload(true);
            log.atInfo()
                    .addKeyValue("event", "rules_reloaded")
                    .addKeyValue("domains", next.domains().keySet())
                    .addKeyValue("rules", next.ruleCount())
                    .log();
            return true;
        } catch (ConfigException e) {
            service.metrics().reload(false);
            log.atError()
                    .addKeyValue("event", "rules_reload_refused")
                    .addKeyValue("reason", "invalid rules; the previous rules stay in force")
                    .addKeyValue("problems", String.join(" | ", e.problems()))
                    .log();
            return false;
        }
    }

    private List<String> fingerprint() {
        List<String> out = new ArrayList<>();
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.list(p)) {
                    s.sorted().forEach(f -> out.add(stamp(f)));
                } catch (IOException e) {
                    out.add(p + ":unlistable");
                }
            } else {
                out.add(stamp(p));
            }
        }
        return out;
    }

    private static String stamp(Path f) {
        try {
            BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
            Path real = f.toRealPath();
            return f + ":" + real + ":" + a.size() + ":" + a.lastModifiedTime().toMillis() + ":" + a.fileKey();
        } catch (IOException e) {
            return f + ":missing";
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
