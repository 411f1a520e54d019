package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class FailureKindTest {
    @Test
    void theJavaApisExceptionsNameTheirKind() {
        assertThat(FailureKind.of(new IllegalArgumentException("cost 0"))).isEqualTo(FailureKind.BAD_REQUEST);
        assertThat(FailureKind.of(new UnsupportedOperationException("no reserve")))
                .isEqualTo(FailureKind.UNSUPPORTED);
        assertThat(FailureKind.of(new IllegalStateException("a bug"))).isEqualTo(FailureKind.INTERNAL);
        assertThat(FailureKind.of(new NullPointerException())).isEqualTo(FailureKind.INTERNAL);
    }

    @Test
    void aStoreExceptionIsItsDegradationsKindAndBack() {
        for (Degradation d : Degradation.values()) {
            if (d == Degradation.NONE) {
                continue;
            }
            FailureKind k = FailureKind.of(new StoreException("down", null, d));
            assertThat(k).isEqualTo(FailureKind.of(d));
            assertThat(k.degradation()).isEqualTo(d);
            assertThat(k.storeFailure()).isTrue();
        }
        assertThat(FailureKind.of(Degradation.TIMEOUT)).isEqualTo(FailureKind.TIMED_OUT);
        assertThat(FailureKind.of(Degradation.MISCONFIGURED)).isEqualTo(FailureKind.MISCONFIGURED);
        assertThatThrownBy(() -> FailureKind.of(Degradation.NONE)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theKindsThatAreNoStoreFailureHaveNoDegradation() {
        for (FailureKind k :
                new FailureKind[] {FailureKind.BAD_REQUEST, FailureKind.UNSUPPORTED, FailureKind.INTERNAL}) {
            assertThat(k.degradation()).as("%s", k).isNull();
            assertThat(k.storeFailure()).as("%s", k).isFalse();
        }
    }

    @Test
    void aFuturesWrappingIsLookedThrough() {
        StoreException timeout = new StoreException("slow", null, Degradation.TIMEOUT);
        assertThat(FailureKind.of(new CompletionException(new ExecutionException(timeout))))
                .isEqualTo(FailureKind.TIMED_OUT);
        assertThat(FailureKind.unwrap(new CompletionException(timeout))).isSameAs(timeout);
    }
}
