package dev.sluice.failsafe;

import dev.sluice.Degradation;
import java.util.function.BooleanSupplier;

/** A fail-safe limiter's {@link StoreHealth}, read live from its circuit, its policy's counts and its store. */
final class CircuitHealth implements StoreHealth {
    private final Circuit circuit;
    private final FailurePolicy policy;
    private final PolicyDecisions byPolicy;
    private final BooleanSupplier opened;

    CircuitHealth(Circuit circuit, FailurePolicy policy, PolicyDecisions byPolicy, BooleanSupplier opened) {
        this.circuit = circuit;
        this.policy = policy;
        this.byPolicy = byPolicy;
        this.opened = opened;
    }

    @Override
    public Degradation cause() {
        return circuit.state(); // open (with its cause) from build() until the store is installed
    }

    @Override
    public boolean opened() {
        return opened.getAsBoolean();
    }

    @Override
    public FailurePolicy policy() {
        return policy;
    }

    @Override
    public long degradedCount(Degradation cause) {
        return byPolicy.count(cause);
    }
}
