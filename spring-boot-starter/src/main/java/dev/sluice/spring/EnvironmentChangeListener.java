package dev.sluice.spring;

import java.util.Locale;
import java.util.Set;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;

/**
 * Spring Cloud's refresh, for {@link SluiceRefresh}: an {@link EnvironmentChangeEvent} that names a {@code sluice.*}
 * property (or names none: whoever published it did not say) rebuilds Sluice's rules. First of the event's
 * listeners, before Spring Cloud rebinds the {@code @ConfigurationProperties} beans: that rebinding throws on a value
 * that does not bind, and Sluice has then already kept its rules and said why. Loaded only when spring-cloud-context
 * is on the class path.
 */
final class EnvironmentChangeListener implements ApplicationListener<EnvironmentChangeEvent>, Ordered {
    private final SluiceRefresh refresh;

    EnvironmentChangeListener(SluiceRefresh refresh) {
        this.refresh = refresh;
    }

    @Override
    public void onApplicationEvent(EnvironmentChangeEvent event) {
        if (concernsSluice(event.getKeys())) {
            refresh.refresh();
        }
    }

    /** {@code sluice.limits.x}, {@code sluice.rules[0].unit}, or an environment variable's {@code SLUICE_…}. */
    static boolean concernsSluice(Set<String> keys) {
        if (keys.isEmpty()) {
            return true;
        }
        for (String k : keys) {
            String lower = k.toLowerCase(Locale.ROOT);
            if (lower.startsWith("sluice.") || lower.startsWith("sluice_") || lower.startsWith("sluice[")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
