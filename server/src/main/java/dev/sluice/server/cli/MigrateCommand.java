package dev.sluice.server.cli;

import dev.sluice.postgres.MigrationReport;
import dev.sluice.postgres.Migrations;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sluice migrate --store postgresql://…}: creates or updates the PostgreSQL schema (tables, indexes and
 * functions; idempotent, safe to run from several instances at once) and says what it created or changed, or that
 * nothing was needed. Only PostgreSQL has a schema; for the other stores it says so.
 */
@Command(
        name = "migrate",
        mixinStandardHelpOptions = true,
        description = "Apply the PostgreSQL schema (only meaningful with --store postgresql://…).")
final class MigrateCommand implements Callable<Integer> {
    /** A migration is not a decision: it may wait for a connection as long as an operator would. */
    private static final Duration MIGRATION_CONNECT_TIMEOUT = Duration.ofSeconds(5);

    @Option(names = "--store", defaultValue = "memory", description = "postgresql://user:password@host:5432/db")
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
        // Migrations directly, not through a PostgresRateLimiter: building one creates a missing schema itself, and
        // this command could then only ever say that nothing was left to do
        try (var ds = Stores.dataSource(store, 1, MIGRATION_CONNECT_TIMEOUT)) {
            MigrationReport report = Migrations.apply(ds, Migrations.DEFAULT_SCHEMA, Migrations.DEFAULT_PREFIX);
            System.out.println("sluice migrate: " + report.describe() + " on " + Stores.redact(store));
            return 0;
        } catch (RuntimeException e) {
            System.err.println("sluice migrate: " + e.getMessage());
            return 1;
        }
    }
}
