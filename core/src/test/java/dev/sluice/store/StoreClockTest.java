package dev.sluice.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ManualTicker;
import org.junit.jupiter.api.Test;

/** "The store decides the time" is a value, not a null or a -1. */
class StoreClockTest {

    @Test
    void theStoresClockIsReadByTheStore() {
        StoreClock c = StoreClock.store();
        assertThat(c.isStore()).isTrue();
        assertThat(c.read()).isSameAs(StoreClock.Reading.STORE);
        assertThatThrownBy(() -> c.read().clientNanos())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("read by the store");
    }

    @Test
    void aClientTickerIsReadWhenTheCallIsMade() {
        ManualTicker t = ManualTicker.atEpochNanos(1_000);
        StoreClock c = StoreClock.client(t);
        assertThat(c.isStore()).isFalse();
        StoreClock.Reading first = c.read();
        t.advance(java.time.Duration.ofNanos(500));
        assertThat(first.clientNanos()).isEqualTo(1_000);
        assertThat(c.read().clientNanos()).isEqualTo(1_500);
        assertThatThrownBy(() -> StoreClock.client(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("StoreClock.store()");
    }
}
