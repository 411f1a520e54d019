package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConfigNamesTest {
    enum Transport {
        IO_URING,
        EPOLL
    }

    @Test
    void aConstantIsWrittenInLowerCaseAndReadInAnyCaseWithSpacesAround() {
        assertThat(ConfigNames.of(Transport.IO_URING)).isEqualTo("io_uring");
        assertThat(ConfigNames.find(Transport.values(), "io_uring")).isEqualTo(Transport.IO_URING);
        assertThat(ConfigNames.find(Transport.values(), " Epoll ")).isEqualTo(Transport.EPOLL);
        assertThat(ConfigNames.find(Transport.values(), "kqueue")).isNull();
        assertThat(ConfigNames.find(Transport.values(), "io-uring"))
                .as("no other spelling")
                .isNull();
    }
}
