package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One sample of the service's Prometheus text ({@code GET /metrics}), for the end-to-end tests. */
final class PrometheusSamples {
    private PrometheusSamples() {}

    /**
     * The value of {@code sample} (a name, e.g. {@code sluice_store_healthy}, or a name with its labels as the
     * exposition writes them, sorted) in {@code exposition}; asserted to be there.
     */
    static double value(String exposition, String sample) {
        Matcher m =
                Pattern.compile("(?m)^" + Pattern.quote(sample) + " (\\S+)$").matcher(exposition);
        assertThat(m.find()).as(sample + " in\n" + exposition).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
