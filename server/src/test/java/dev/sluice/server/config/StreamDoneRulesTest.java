package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Settlement;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Sluice's {@code charge_on_stream_done} and {@code reservation} beside a rate_limit, and their problems. */
class StreamDoneRulesTest {

    private static List<String> problems(String yaml) {
        return RulesParserKeysTest.problems(yaml);
    }

    @Test
    void bothFormsAreReadOntoTheRuleAndTheDomainKnowsItsIdKeys() {
        DomainRules d = RulesParserKeysTest.rules("""
                domain: llm
                descriptors:
                  - key: api_key
                    rate_limit: {algorithm: token_bucket, unit: minute, requests_per_unit: 1000}
                    charge_on_stream_done: true
                  - key: user
                    rate_limit: {unit: minute, requests_per_unit: 1000}
                    reservation: {id_key: request_id, settle_within: 10m}
                  - key: team
                    rate_limit: {unit: minute, requests_per_unit: 10}
                    reservation:
                      id_key: x_id
                  - key: plain
                    rate_limit: {unit: minute, requests_per_unit: 10}
                """);
        assertThat(d.rules().get(0).streamDone()).isEqualTo(new StreamDone(null, Settlement.DEFAULT_SETTLE_WITHIN));
        assertThat(d.rules().get(0).streamDone().charges()).isTrue();
        assertThat(d.rules().get(1).streamDone()).isEqualTo(new StreamDone("request_id", Duration.ofMinutes(10)));
        assertThat(d.rules().get(2).streamDone()).isEqualTo(new StreamDone("x_id", Settlement.DEFAULT_SETTLE_WITHIN));
        assertThat(d.rules().get(3).streamDone()).isNull();
        assertThat(d.reservationIdKeys()).containsExactlyInAnyOrder("request_id", "x_id");
    }

    @Test
    void theReadmeExampleLoads() throws IOException {
        DomainRules d = RulesParserKeysTest.rules(RulesParserMatchTest.readmeBlock("domain: llm"));
        assertThat(d.rules().get(0).streamDone().charges()).isTrue();
        assertThat(d.rules().get(1).streamDone()).isEqualTo(new StreamDone("request_id", Duration.ofMinutes(10)));
    }

    @Test
    void misuseIsRefusedWithItsLineAndTheFix() {
        assertThat(problems("""
                domain: d
                descriptors:
                  - key: a
                    rate_limit: {algorithm: sliding_window, unit: minute, requests_per_unit: 10}
                    charge_on_stream_done: true
                  - key: b
                    rate_limit: {unit: minute, requests_per_unit: 10}
                    charge_on_stream_done: true
                    reservation: {id_key: rid}
                  - key: c
                    charge_on_stream_done: true
                  - key: e
                    rate_limit: {unit: minute, requests_per_unit: 10}
                    reservation: {settle_within: 5m}
                  - key: f
                    rate_limit: {unit: minute, requests_per_unit: 10}
                    reservation: {id_key: rid, settle_within: 2d}
                  - key: g
                    rate_limit: {unit: minute, requests_per_unit: 10}
                    reservation: {id_key: rid, within: 5m}
                  - key: h
                    rate_limit: {unlimited: true}
                    charge_on_stream_done: true
                  - key: i
                    rate_limit: {unit: minute, requests_per_unit: 10, id_key: rid}
                """))
                .containsExactly(
                        "rules.yaml:5: 'charge_on_stream_done' on a sliding_window rule: a cost counted past the limit"
                                + " of a sliding_window cannot be charged in full; use algorithm token_bucket, gcra or"
                                + " fixed_window, or settle an estimate with reservation: {id_key: …}",
                        "rules.yaml:9: 'charge_on_stream_done' and 'reservation' on one descriptor: pick one"
                                + " ('charge_on_stream_done' counts the cost the stream end reports; 'reservation'"
                                + " admits on an estimate at the start and settles at the stream end)",
                        "rules.yaml:11: 'charge_on_stream_done' on a descriptor without 'rate_limit' has no effect:"
                                + " put it beside the rate_limit whose cost is known when the stream ends",
                        "rules.yaml:14: 'reservation' without an 'id_key': name the descriptor entry that carries"
                                + " the request's id, e.g. 'id_key: request_id' (Envoy: a request_headers action on"
                                + " x-request-id)",
                        "rules.yaml:17: settle_within PT48H is out of range: use more than 0 and at most PT24H (the"
                                + " store keeps the record until then)",
                        "rules.yaml:20: unknown key 'within' in 'reservation': expected one of id_key, settle_within",
                        "rules.yaml:23: 'charge_on_stream_done' on an unlimited rule has nothing to count: remove it,"
                                + " or give the rate_limit 'requests_per_unit' ≥ 1",
                        "rules.yaml:25: unknown key 'id_key' in 'rate_limit': it belongs in 'reservation'; expected"
                                + " one of algorithm, burst, name, replaces, requests_per_unit, unit, unlimited,"
                                + " window");
    }
}
