package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A cost known afterwards over Sluice's HTTP API: {@code POST /v1/check} with a {@code reservation} (the hits are the
 * estimate), then {@code POST /v1/settle} at the actual cost; and bad input, a 400 problem naming the value and the
 * fix that changes nothing. Domain {@code metered}: a token bucket of 100 a minute ({@code sluice-stream-done.yaml}).
 */
class SettleHttpTest {
    private TestServer s;

    @BeforeEach
    void start() {
        s = TestServer.start("sluice-stream-done.yaml");
    }

    @AfterEach
    void stop() {
        s.close();
    }

    private static final String USER = "\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"42\"}]}]";

    private TestServer.Resp reserve(long estimate, String reservation) {
        return s.post(
                "{\"domain\":\"metered\",\"hits\":" + estimate + ",\"reservation\":" + reservation + "," + USER + "}");
    }

    private TestServer.Resp settle(String body) {
        return TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/settle"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    private TestServer.Resp settle(String id, long actual) {
        return settle("{\"domain\":\"metered\",\"reservation\":{\"id\":\"" + id + "\"},\"actual\":" + actual + ","
                + USER + "}");
    }

    private long remaining() {
        return s.post(TestServer.check("metered", 0, "user=42"))
                .status(0)
                .get("remaining")
                .asLong();
    }

    @Test
    void aReservationIsSettledOnceAtTheActualCost() {
        TestServer.Resp r = reserve(30, "{\"id\":\"r-1\"}");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.json().get("decision").get("remaining").asLong()).isEqualTo(70);
        assertThat(r.status(0).get("rule").asText()).isEqualTo("metered.user");

        TestServer.Resp st = settle("r-1", 12);
        assertThat(st.status()).as(st.body()).isEqualTo(200);
        assertThat(st.header("Content-Type")).isEqualTo("application/json");
        JsonNode j = st.json();
        assertThat(j.get("settled").asBoolean()).isTrue();
        assertThat(j.get("rule").asText()).isEqualTo("metered.user");
        assertThat(j.get("estimate").asLong()).isEqualTo(30);
        assertThat(j.get("adjusted").asLong()).isEqualTo(-18);
        assertThat(j.get("remaining").asLong()).isEqualTo(88);
        assertThat(j.get("limit").get("capacity").asLong()).isEqualTo(100);
        assertThat(remaining()).isEqualTo(88);

        // once: a retried settle changes nothing
        JsonNode again = settle("r-1", 50).json();
        assertThat(again.get("settled").asBoolean()).isFalse();
        assertThat(again.get("adjusted").asLong()).isZero();
        assertThat(remaining()).isEqualTo(88);
    }

    @Test
    void moreThanTheEstimateIsChargedIntoDebtAndADeniedReservationLeavesNothingPending() {
        assertThat(reserve(10, "{\"id\":\"r-1\",\"settle_within_ns\":60000000000}")
                        .status())
                .isEqualTo(200);
        JsonNode j = settle("r-1", 100).json();
        assertThat(j.get("adjusted").asLong()).isEqualTo(90);
        assertThat(j.get("remaining").asLong()).isZero();
        TestServer.Resp denied = reserve(5, "{\"id\":\"r-2\"}");
        assertThat(denied.status()).isEqualTo(429);
        assertThat(denied.header("Retry-After")).isNotNull();
        assertThat(settle("r-2", 1).json().get("settled").asBoolean()).isFalse();
    }

    @Test
    void anUnsettledReservationSettlesAtItsEstimateAfterSettleWithin() {
        assertThat(reserve(40, "{\"id\":\"r-1\",\"settle_within_ns\":1000000000}")
                        .status())
                .isEqualTo(200);
        s.clock().advance(Duration.ofSeconds(1));
        assertThat(settle("r-1", 0).json().get("settled").asBoolean()).isFalse();
        assertThat(remaining()).isEqualTo(61); // 60 left, plus a second of refill (100 a minute: 1.67)
    }

    @Test
    void badInputIsA400NamingTheValueAndTheFixAndChangesNothing() {
        assertThat(reserve(30, "{\"id\":\"r-1\"}").status()).isEqualTo(200);
        assertProblem(reserve(5, "{\"id\":\"r-1\"}"), "invalid-request", "reservation 'r-1' is already pending");
        assertProblem(reserve(5, "{\"id\":\"has space\"}"), "invalid-reservation", "reservation.id: reservation id");
        assertProblem(reserve(5, "{}"), "invalid-reservation", "reservation.id is missing");
        assertProblem(reserve(5, "{\"id\":\"x\",\"within\":1}"), "unknown-field", "unknown field 'within'");
        assertProblem(reserve(5, "{\"id\":\"x\",\"settle_within_ns\":0}"), "invalid-reservation", "settle_within_ns");
        assertProblem(
                reserve(5, "{\"id\":\"x\",\"settle_within_ns\":172800000000000}"),
                "invalid-reservation",
                "reservation.settle_within PT48H is out of range");
        assertProblem(reserve(0, "{\"id\":\"x\"}"), "invalid-reservation", "hits 0 reserves nothing");
        assertProblem(
                s.post("{\"domain\":\"metered\",\"reservation\":{\"id\":\"x\"},\"descriptors\":["
                        + "{\"entries\":[{\"key\":\"user\",\"value\":\"1\"}]},"
                        + "{\"entries\":[{\"key\":\"user\",\"value\":\"2\"}]}]}"),
                "invalid-reservation",
                "a reservation is on one descriptor, not 2");
        assertProblem(
                s.post("{\"domain\":\"llm\",\"reservation\":{\"id\":\"x\"},\"descriptors\":["
                        + "{\"entries\":[{\"key\":\"user\",\"value\":\"1\"}]}]}"),
                "invalid-reservation",
                "rule llm.user settles by itself (reservation: {id_key: request_id}");
        assertProblem(settle("r-1", 101), "invalid-reservation", "actual: actual cost 101 is out of range");
        assertProblem(
                settle("{\"domain\":\"metered\",\"reservation\":{\"id\":\"r-1\"}," + USER + "}"),
                "invalid-reservation",
                "'actual' must be a whole number ≥ 0");
        assertProblem(
                settle("{\"domain\":\"metered\",\"reservation\":{\"id\":\"r-1\"},\"actual\":1,\"descriptors\":"
                        + "[{\"entries\":[{\"key\":\"user\",\"value\":\"42\"}],\"hits\":3}]}"),
                "invalid-reservation",
                "descriptors[0] has hits: a settle takes the cost as 'actual'");
        assertProblem(
                settle("{\"domain\":\"metered\",\"actual\":1," + USER + "}"),
                "invalid-reservation",
                "'reservation' is missing");
        // nothing of it changed the state: r-1 is still pending with its 30
        assertThat(remaining()).isEqualTo(70);
        assertThat(settle("r-1", 30).json().get("settled").asBoolean()).isTrue();
    }

    private static void assertProblem(TestServer.Resp r, String type, String detail) {
        assertThat(r.status()).as(r.body()).isEqualTo(400);
        assertThat(r.json().get("type").asText()).isEqualTo("urn:sluice:problem:" + type);
        assertThat(r.json().get("detail").asText()).contains(detail);
    }
}
