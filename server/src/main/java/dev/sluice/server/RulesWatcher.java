package dev.sluice.server;

import dev.sluice.Scheduler;
import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.store.Repeat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
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
 *
 * <p>Time and threads are the server's {@link Scheduler}'s: a poll is scheduled an interval after the last one ended,
 * and runs on a daemon thread of the scheduler's factory ({@code sluice-rules-watcher-<n>}), since it reads the file
 * system, which may block.
 */
final class RulesWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RulesWatcher.class);

    private final List<Path> paths;
    private final DecisionService service;
    /** The polls, one after the other, on the watcher's own thread or (tests) where the test said. */
    private final Repeat polls;
    /** Read and written by polls only, which run one at a time. */
    private List<String> lastSeen;

    RulesWatcher(List<Path> paths, DecisionService service, Duration interval, Scheduler scheduler) {
        this(paths, service, interval, scheduler, null);
    }

    /** @param pollsOn where polls run (tests); null: a daemon thread of {@code scheduler}'s factory */
    RulesWatcher(
            List<Path> paths,
            DecisionService service,
            Duration interval,
            Scheduler scheduler,
            @Nullable Executor pollsOn) {
        this.paths = List.copyOf(paths);
        this.service = service;
        this.lastSeen = fingerprint();
        Duration every = Duration.ofMillis(Math.max(50, interval.toMillis()));
        this.polls = new Repeat(scheduler, "rules-watcher", pollsOn, () -> {
            poll();
            return every;
        });
        this.polls.after(every);
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
        polls.close(Duration.ZERO);
    }
}
