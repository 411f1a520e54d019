package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PermitTest {

    @Test
    void aBoundedKeyIsThePrefixAndTheValueWhileTheyFit() {
        assertThat(Permit.boundedKey("rule:", "42")).isEqualTo("rule:42");
        String fits = "v".repeat(Permit.MAX_KEY_LENGTH - 5);
        assertThat(Permit.boundedKey("rule:", fits)).isEqualTo("rule:" + fits);
    }

    @Test
    void aValueThatWouldMakeTheKeyTooLongIsReplacedByItsSha256() {
        String prefix = "p".repeat(Permit.MAX_KEY_LENGTH - 2);
        // SHA-256("abc"), the FIPS 180-2 test vector
        assertThat(Permit.boundedKey(prefix, "abc"))
                .isEqualTo(prefix + "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        String a = Permit.boundedKey("rule:", "x".repeat(Permit.MAX_KEY_LENGTH));
        String b = Permit.boundedKey("rule:", "x".repeat(Permit.MAX_KEY_LENGTH) + "y");
        assertThat(a)
                .startsWith("rule:sha256:")
                .hasSize("rule:sha256:".length() + 64)
                .isNotEqualTo(b);
        Permit.checkKey(a);
    }
}
