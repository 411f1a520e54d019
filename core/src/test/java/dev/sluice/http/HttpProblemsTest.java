package dev.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.FailureKind;
import org.junit.jupiter.api.Test;

class HttpProblemsTest {
    @Test
    void everyKindReadsBackFromItsStatusAndType() {
        for (FailureKind k : FailureKind.values()) {
            assertThat(HttpProblems.kindOf(HttpProblems.status(k), HttpProblems.TYPE_PREFIX + HttpProblems.type(k)))
                    .as("%s", k)
                    .isEqualTo(k);
            assertThat(HttpProblems.kindOf(HttpProblems.status(k), HttpProblems.type(k)))
                    .as("%s without the prefix", k)
                    .isEqualTo(k);
        }
    }

    @Test
    void aBadRequestOrAnUnsupportedOneIsToldByItsStatusWhateverItsType() {
        assertThat(HttpProblems.kindOf(400, "urn:sluice:problem:unknown-domain"))
                .isEqualTo(FailureKind.BAD_REQUEST);
        assertThat(HttpProblems.kindOf(501, "urn:sluice:problem:peek-unsupported"))
                .isEqualTo(FailureKind.UNSUPPORTED);
        // a store slug on another status is not the store's failure
        assertThat(HttpProblems.kindOf(400, "store-timeout")).isEqualTo(FailureKind.BAD_REQUEST);
    }

    @Test
    void whatIsNotTheServicesOwnAnswerIsClassifiedByStatus() {
        assertThat(HttpProblems.kindOf(503, null)).isEqualTo(FailureKind.UNAVAILABLE);
        assertThat(HttpProblems.kindOf(503, "urn:other:busy")).isEqualTo(FailureKind.UNAVAILABLE);
        assertThat(HttpProblems.kindOf(502, null)).isEqualTo(FailureKind.UNAVAILABLE);
        assertThat(HttpProblems.kindOf(504, null)).isEqualTo(FailureKind.TIMED_OUT);
        assertThat(HttpProblems.kindOf(401, "urn:sluice:problem:unauthorized")).isEqualTo(FailureKind.MISCONFIGURED);
        assertThat(HttpProblems.kindOf(403, null)).isEqualTo(FailureKind.MISCONFIGURED);
        assertThat(HttpProblems.kindOf(404, "urn:sluice:problem:not-found")).isEqualTo(FailureKind.INTERNAL);
    }
}
