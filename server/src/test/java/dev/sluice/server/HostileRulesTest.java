package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.RuleSet;
import org.junit.jupiter.api.Test;

/**
 * Rules files that RulesFuzzTest found mishandled, each pinned: the parser answers every one with a
 * {@code file:line: message} problem — before, two of them overflowed the stack and the others had no line.
 */
class HostileRulesTest {

    static ConfigException refused(String yaml) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> RuleSet.parse("test", yaml));
        assertThat(e).as("refused: %s", yaml).isNotNull();
        return e;
    }

    @Test
    void aDescriptorListThatContainsItselfIsAProblemNotAStackOverflow() {
        ConfigException e = refused("domain: d\ndescriptors: &x\n  - key: k\n    descriptors: *x\n");
        assertThat(e.problems())
                .containsExactly("test:2: 'descriptors' contains itself through an alias (*name): "
                        + "descriptors form a tree; write the nested levels out");
    }

    @Test
    void aDescriptorThatContainsItselfIsAProblemNotAStackOverflow() {
        ConfigException e = refused("domain: d\ndescriptors:\n  - &y\n    key: k\n    descriptors:\n      - *y\n");
        assertThat(e.getMessage()).startsWith("test:6: 'descriptors' contains itself through an alias");
    }

    @Test
    void theSameListAliasedTwiceSideBySideIsNotACycle() throws ConfigException {
        RuleSet rules = RuleSet.parse("test", """
                domain: d
                descriptors:
                  - key: a
                    descriptors: &leaf
                      - key: user
                        rate_limit: {unit: second, requests_per_unit: 1}
                  - key: b
                    descriptors: *leaf
                """);
        assertThat(rules.ruleCount()).isEqualTo(2);
    }

    @Test
    void aBillionLaughsIsRefusedWithTheLineOfTheAliasOverTheBound() {
        StringBuilder yaml = new StringBuilder("domain: d\nl0: &l0 [\"lol\"]\n");
        for (int i = 1; i <= 9; i++) {
            yaml.append("l")
                    .append(i)
                    .append(": &l")
                    .append(i)
                    .append(" [")
                    .append(("*l" + (i - 1) + ", ").repeat(9))
                    .append("*l")
                    .append(i - 1)
                    .append("]\n");
        }
        ConfigException e = refused(yaml.append("descriptors: *l9\n").toString());
        assertThat(e.problems())
                .containsExactly("test:5: not valid YAML: more than 20 aliases (*name) of lists or "
                        + "mappings, the bound that stops alias bombs: write those parts out");
    }

    @Test
    void nestingDeeperThan50HasALine() {
        ConfigException e = refused("domain: d\ndescriptors: " + "[".repeat(60) + "]".repeat(60) + "\n");
        assertThat(e.problems())
                .containsExactly(
                        "test:2: not valid YAML: nested deeper than 50 levels: rules need only a few; flatten the file");
    }

    @Test
    void aControlCharacterIsNamedWithItsLine() {
        ConfigException e = refused("domain: d\ndescriptors:\n  - key: \u0001\n");
        assertThat(e.problems())
                .containsExactly("test:3: not valid YAML: the character U+0001 is not allowed in "
                        + "YAML: remove it (in a double-quoted string it may be written as an escape, e.g. \\u0000)");
    }

    @Test
    void aHugeValueAliasedManyTimesIsQuotedShortInEveryProblem() {
        StringBuilder yaml = new StringBuilder("domain: d\nbig: &s ")
                .append("x".repeat(200_000))
                .append("\ndescriptors:\n");
        yaml.append("  - key: *s\n".repeat(300));
        ConfigException e = refused(yaml.toString());
        assertThat(e.problems()).hasSize(300); // 'big' is an unknown key, then 299 duplicates
        assertThat(e.problems().get(1))
                .isEqualTo("test:5: duplicate descriptor key '" + "x".repeat(80)
                        + "…' (200000 characters) in the same list: each key/value pair may appear once per level");
        assertThat(e.getMessage().length()).isLessThan(300 * 250);
    }
    /**
     * SnakeYAML reads the number of a {@code %YAML} directive and of a block scalar's indentation indicator with
     * {@code Character.isDigit}, which takes any script's digit, then parses it as a Java int, which fails for one
     * outside the Basic Multilingual Plane: a raw NumberFormatException, found by RulesFuzzTest.
     */
    @Test
    void aDigitOutsideZeroToNineWhereYamlWantsANumberIsAProblemWithItsLine() {
        assertThat(refused("%YAML 1.\uD835\uDFD8\n---\ndomain: d\n").problems())
                .containsExactly("test:1: not valid YAML: the digit '\uD835\uDFD8' (U+1D7D8) is not one of 0-9,"
                        + " the only digits YAML reads as a number here (a %YAML version, a block scalar's"
                        + " indentation): write it with 0-9");
        assertThat(refused("domain: d\ndescriptors:\n  - key: |-\uD835\uDFD8\n      x\n")
                        .problems())
                .containsExactly("test:3: not valid YAML: the digit '\uD835\uDFD8' (U+1D7D8) is not one of 0-9,"
                        + " the only digits YAML reads as a number here (a %YAML version, a block scalar's"
                        + " indentation): write it with 0-9");
    }

    /** Java reads other scripts' digits as numbers ('٣' as 3); envoy, YAML and a reader of the file do not. */
    @Test
    void numbersAreWrittenWithTheDigitsZeroToNine() {
        ConfigException e = refused("""
                domain: d
                descriptors:
                  - key: a
                    rate_limit: {unit: second, requests_per_unit: \u0663}
                  - key: b
                    rate_limit: {requests_per_unit: 1, algorithm: fixed_window, window: \u0663s}
                  - key: c
                    rate_limit: {unit: second, requests_per_unit: 5, algorithm: token_bucket, burst: 1\uFF10}
                """);
        assertThat(e.problems())
                .containsExactly(
                        "test:4: 'requests_per_unit' must be a whole number written with 0-9, not '\u0663'",
                        "test:6: duration '\u0663s' is not understood: write a number and a unit (ns, us, ms, s, m,"
                                + " h, d, w), e.g. 90s, 1500ms, 1h30m",
                        "test:8: 'burst' must be a whole number written with 0-9, not '1\uFF10'");
    }
}
