package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.Decision;
import dev.sluice.server.decision.StoreReport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The body of {@code GET /readyz}: what its probe found and the store's health, in the words of every other surface
 * ({@link StoreReport}):
 *
 * <pre>{@code
 * {"status":"ready","store":"redis+leases","store_healthy":true,"store_opened":true,"failure_policy":"fail_open"}
 * {"status":"degraded","store":"redis+leases","store_healthy":false,"store_opened":true,"failure_policy":"fail_open",
 *  "degraded":"unavailable"}
 * }</pre>
 *
 * {@code status} is {@code ready} when the store decided the probe, {@code degraded} when the failure policy did
 * ({@code degraded} then names the cause, as on a decision); {@code store_healthy} is the store's circuit, the same as
 * {@code sluice_store_healthy} and the dashboard's; {@code store_opened} is false while a store that was down at
 * startup is still being opened; {@code failure_policy} is null for a store without one (the in-memory store).
 */
final class HealthJson {
    private HealthJson() {}

    static byte[] ready(Decision probe, StoreReport store) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(160);
        try (JsonGenerator g = CheckJson.MAPPER.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("status", probe.degraded() ? "degraded" : "ready");
            g.writeStringField("store", store.store());
            g.writeBooleanField("store_healthy", store.healthy());
            g.writeBooleanField("store_opened", store.opened());
            g.writeStringField("failure_policy", store.policyName());
            if (probe.degraded()) {
                g.writeStringField("degraded", probe.degradation().label());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
