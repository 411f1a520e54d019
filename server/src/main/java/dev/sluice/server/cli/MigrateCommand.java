package dev.sluice.server.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sluice migrate --store postgresql://…}: applies the PostgreSQL schema. Only the PostgreSQL store has a
 * schema; for others it says so, and in a build without sluice-postgres it says that.
 */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = "Apply the PostgreSQL schema (only meaningful with --store postgresql://…).")
final class MigrateCommand implements Callable<Integer> {

    @Option(names = "--store", defaultValue = "memory", description = "postgresql://user:pass@host:5432/db")
    String store;

    @Override
    public Integer call() {
        String kind = Stores.kind(store);
        if (!"postgres".equals(kind)) {
            System.err.println("nothing to migrate: the " + (kind == null ? store : kind)
                    + " store has no schema. 'sluice migrate' applies the PostgreSQL schema: "
                    + "sluice migrate --store postgresql://user@host:5432/db");
            return 2;
        }
        System.err.println("store postgres is not available in this build: only 'memory' is; "
                + "run 'sluice migrate' from a build that includes sluice-postgres");
        return 2;
    }
}
