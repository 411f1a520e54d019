package dev.sluice.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.core.env.Environment;

/**
 * What Sluice built from {@code sluice.*}, rebuilt when those properties change: the filter's rules, the named limits
 * of {@link RateLimited} methods and shadow mode. Spring Cloud's refresh ({@code /actuator/refresh},
 * {@code ContextRefresher.refresh()}, a config server's push: an {@code EnvironmentChangeEvent}) calls
 * {@link #refresh}; without Spring Cloud nothing does, and the rules are those of the start.
 *
 * <p>A limit keeps its name through a refresh ({@code sluice.limits.<name>}, or the rule's name for an inline one),
 * and a name is a limit's identity: each key keeps what it spent, read under the new numbers. Tightened, a key that
 * spent more than the new capacity is denied until that has refilled; loosened, it gets at most the new capacity
 * less what it spent. A new name starts fresh.
 *
 * <p>A refresh is all or nothing: the properties are bound afresh (not the {@link SluiceProperties} bean, which Spring
 * Cloud rebinds in place, and half when a value does not bind) and everything is built and checked before anything
 * is replaced. A bad value keeps every rule in force and is logged as an error naming the property and the fix, as
 * the service's reload does. The store and what opens it ({@code sluice.store}, {@code failure-policy},
 * {@code budget}, {@code probe-interval}), {@code enabled} and {@code filter-order} are read at startup only: a
 * refresh that changes them says so in a warning.
 */
final class SluiceRefresh {
    private static final System.Logger LOG = System.getLogger(SluiceRefresh.class.getName());

    /** One thing built from the properties: builds and checks it anew, and returns how to put it in place. */
    interface Part {
        /**
         * Builds and checks this part from {@code next}; returns how to put it in place.
         *
         * @throws SluiceConfigException naming the property and the fix
         */
        Runnable rebuild(SluiceProperties next);
    }

    private final Environment environment;
    private final List<Part> parts = new CopyOnWriteArrayList<>();
    /** The properties in force: those of the start, then of the last refresh that passed. */
    private volatile SluiceProperties current;

    SluiceRefresh(Environment environment) {
        this.environment = environment;
        this.current = bind(environment);
    }

    private static SluiceProperties bind(Environment environment) {
        return Binder.get(environment).bindOrCreate("sluice", SluiceProperties.class);
    }

    /** The properties in force. */
    SluiceProperties current() {
        return current;
    }

    void add(Part part) {
        parts.add(part);
    }

    /**
     * Binds {@code sluice.*} again and rebuilds every part from it; on any error keeps what is in force and logs it.
     *
     * @return whether the refreshed properties are in force now
     */
    synchronized boolean refresh() {
        SluiceProperties next;
        List<Runnable> apply = new ArrayList<>();
        try {
            next = bind(environment);
            RuleFactory.namedLimits(next); // checked even where no part uses them, as at startup
            for (Part p : parts) {
                apply.add(p.rebuild(next));
            }
        } catch (SluiceConfigException e) {
            refused(String.valueOf(e.getMessage()));
            return false;
        } catch (BindException e) {
            ConfigurationProperty p = e.getProperty();
            refused(
                    p == null
                            ? String.valueOf(e.getMessage())
                            : p.getName() + ": cannot read '" + p.getValue() + "' (" + p.getOrigin() + ") as "
                                    + e.getTarget().getType() + ": fix the value");
            return false;
        }
        apply.forEach(Runnable::run);
        SluiceProperties before = current;
        current = next;
        warnStartupOnly(before, next);
        LOG.log(
                System.Logger.Level.INFO,
                "sluice.* refreshed: " + next.getLimits().size() + " named limit(s), "
                        + next.getRules().size()
                        + " rule(s) in force; each key keeps what it spent under a limit of the same name");
        return true;
    }

    private static void refused(String why) {
        LOG.log(
                System.Logger.Level.ERROR,
                "sluice.* refresh REFUSED, the rules in force stay as they were (fix the property and refresh again): "
                        + why);
    }

    private static void warnStartupOnly(SluiceProperties before, SluiceProperties next) {
        List<String> changed = new ArrayList<>();
        if (!Objects.equals(before.getStore(), next.getStore())) {
            changed.add("sluice.store");
        }
        if (before.getFailurePolicy() != next.getFailurePolicy()) {
            changed.add("sluice.failure-policy");
        }
        if (!Objects.equals(before.getBudget(), next.getBudget())) {
            changed.add("sluice.budget");
        }
        if (!Objects.equals(before.getProbeInterval(), next.getProbeInterval())) {
            changed.add("sluice.probe-interval");
        }
        if (before.isEnabled() != next.isEnabled()) {
            changed.add("sluice.enabled");
        }
        if (before.getFilterOrder() != next.getFilterOrder()) {
            changed.add("sluice.filter-order");
        }
        if (!changed.isEmpty()) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    changed + " changed, but are read at startup only: they take effect when the application restarts");
        }
    }
}
