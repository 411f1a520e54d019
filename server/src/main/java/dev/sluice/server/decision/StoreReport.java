package dev.sluice.server.decision;

import dev.sluice.Degradation;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.failsafe.StoreHealth;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What the service says of its store, in the same words on every surface: {@code /readyz}, {@code /healthcheck} and
 * gRPC health, the dashboard's data (the metrics read the same {@link StoreHealth}). It is read from the health the
 * limiter reports, which is the remote store's however it is wrapped (leases over a failure policy over Redis);
 * reading it asks no store. A store with no failure policy in front of it (the in-memory store) has no circuit: it
 * is healthy while the process is.
 *
 * @param store  the store's display name, e.g. {@code redis+leases}
 * @param cause  {@link Degradation#NONE} while the store decides; else why the failure policy decides instead
 * @param opened false while a store that was down when the service started has not been opened yet
 * @param policy what decides while the store cannot; empty for a store without a failure policy
 */
public record StoreReport(String store, Degradation cause, boolean opened, Optional<FailurePolicy> policy) {

    static StoreReport of(String store, Optional<StoreHealth> health) {
        return health.map(h -> new StoreReport(store, h.cause(), h.opened(), Optional.of(h.policy())))
                .orElseGet(() -> new StoreReport(store, Degradation.NONE, true, Optional.empty()));
    }

    /** Whether the store decides now (it is open and its circuit closed): {@code sluice_store_healthy} 1. */
    public boolean healthy() {
        return cause == Degradation.NONE;
    }

    /** The policy as {@code --failure-policy} spells it ({@code fail_open}), or null for a store without one. */
    public @Nullable String policyName() {
        return policy.map(p -> p.name().toLowerCase(Locale.ROOT)).orElse(null);
    }

    /** The cause's label ({@code unavailable}), or null while the store is healthy. */
    public @Nullable String causeLabel() {
        return healthy() ? null : cause.label();
    }
}
