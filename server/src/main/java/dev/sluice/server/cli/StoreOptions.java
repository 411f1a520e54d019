package dev.sluice.server.cli;

import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/** {@code sluice serve}'s options of the store: which one, its budget, its failure policy, leases and bounds. */
final class StoreOptions {
    @Option(
            names = "--store",
            defaultValue = "memory",
            paramLabel = "STORE",
            description = "memory (default) | redis://host:6379 | postgresql://user:password@host:5432/db "
                    + "(creates Sluice's tables if they are missing)")
    String store;

    @Option(
            names = "--pool-size",
            defaultValue = "16",
            description = "PostgreSQL store: connections in the pool (default ${DEFAULT-VALUE})")
    int poolSize;

    @Option(
            names = "--store-timeout",
            paramLabel = "DURATION",
            description = "Time budget of each remote store call, connection and retries included; past it the "
                    + "failure policy decides (default: 1s, sized from the stores' load benchmarks)")
    @Nullable
    String storeTimeout;

    @Option(
            names = "--failure-policy",
            defaultValue = "fail_open",
            paramLabel = "POLICY",
            description = "What decides when a remote store is slow, down or failing: fail_open (allow), "
                    + "fail_closed (deny) or fallback_local (in-memory limits until the store is back); every such "
                    + "answer is marked degraded (default ${DEFAULT-VALUE}; the memory store needs none)")
    String failurePolicy;

    @Option(
            names = "--start-despite-misconfigured-store",
            description = "Start even when the remote store refuses this configuration (wrong password or privilege, "
                    + "unknown host, another service at that port, TLS mismatch, missing database): answer by "
                    + "--failure-policy, marked degraded 'misconfigured', and try the store again every 1 s to 30 s "
                    + "until it is fixed. Without it such a store stops the start with its message (exit code 2); a "
                    + "store that is down or restarting never does")
    boolean startDespiteMisconfiguredStore;

    @Option(
            names = "--leases",
            arity = "0..1",
            defaultValue = "0",
            fallbackValue = "1024",
            paramLabel = "MAX",
            description = "Remote store: decide hot keys here from permits taken in advance (--leases alone: "
                    + "1024); never admits more than the store alone would; an instance holds at most MAX permits "
                    + "of a key at any instant, takes under way included (default off)")
    long leases;

    @Option(
            names = "--max-keys",
            defaultValue = "1048576",
            description = "In-memory store: most tracked keys (default ${DEFAULT-VALUE})")
    int maxKeys;
}
