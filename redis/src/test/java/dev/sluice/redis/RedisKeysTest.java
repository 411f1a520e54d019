package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Limit;
import dev.sluice.Rate;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Where state lives: one Redis key per (key, limit), and the slots the {tag} convention promises. */
class RedisKeysTest {

    private static final Limit TB = Limit.tokenBucket(10, Rate.perSecond(1));
    private static final Limit FW = Limit.fixedWindow(10, Duration.ofMinutes(1));

    private static String of(String key, Limit limit) {
        return new String(RedisKeys.of("sluice:", key, limit), StandardCharsets.UTF_8);
    }

    @Test
    void keysWithoutATagAreTheirOwnTagAndKeysWithOneKeepIt() {
        assertThat(of("user:42", TB)).isEqualTo("sluice:tb:10:1:1000000000{user:42}");
        assertThat(of("{tenant}:user:42", TB)).isEqualTo("sluice:tb:10:1:1000000000:{tenant}:user:42");
        assertThat(of("a{b", FW)).isEqualTo("sluice:fw:10:60000000000{a{b}");
        assertThat(of("a{}b", FW))
                .as("{} is no tag, and } would end ours")
                .isEqualTo("sluice:fw:10:60000000000~{" + Integer.toHexString("a{}b".hashCode()) + "}a{}b");
    }

    @Test
    void everyLimitOnOneKeySharesASlotAndATagGroupsKeys() {
        for (String key : List.of("user:42", "ip:203.0.113.9", "x", "}{", "a{}b", "}", "{", "{}", "a}b{")) {
            assertThat(RedisKeys.slot(RedisKeys.of("sluice:", key, TB)))
                    .as(key)
                    .isEqualTo(RedisKeys.slot(RedisKeys.of("sluice:", key, FW)));
        }
        int tag = RedisKeys.slot("user42".getBytes(StandardCharsets.UTF_8));
        assertThat(RedisKeys.slot(RedisKeys.of("sluice:", "{user42}:ip", FW))).isEqualTo(tag);
        assertThat(RedisKeys.slot(RedisKeys.of("sluice:", "{user42}:account", TB)))
                .isEqualTo(tag);
        assertThat(RedisKeys.slot(RedisKeys.of("sluice:", "user42", TB)))
                .as("the untagged key itself")
                .isEqualTo(tag);
    }

    @Test
    void theMappingIsOneToOne() {
        List<String> keys = List.of(
                "user:42",
                "{user:42}",
                "user:42}",
                "{user:42",
                "user",
                ":user",
                "u{ser}",
                "{u}ser",
                "1:1000000000{x}",
                "1000000000{x}",
                "x}",
                "{x}",
                "x",
                "}",
                "{",
                "{}",
                "}{");
        Set<String> seen = new HashSet<>();
        for (String k : keys) {
            for (Limit l :
                    List.of(TB, FW, Limit.tokenBucket(1, Rate.perSecond(10)), Limit.gcra(Rate.perSecond(1), 10))) {
                assertThat(seen.add(of(k, l))).as("%s under %s", k, l).isTrue();
            }
        }
    }

    @Test
    void aNamedLimitIsKeyedByItsIdentityWhateverItsNumbers() {
        Limit api = Limit.tokenBucket(10, Rate.perSecond(1)).named("api");
        assertThat(of("user:42", api)).isEqualTo("sluice:tb@api{user:42}");
        assertThat(of("user:42", Limit.tokenBucket(3, Rate.perMinute(7)).named("api")))
                .as("other numbers, the same state")
                .isEqualTo(of("user:42", api));
        assertThat(of("user:42", Limit.gcra(Rate.perSecond(1), 10).named("api")))
                .as("another algorithm is another identity")
                .isEqualTo("sluice:gcra@api{user:42}");
        assertThat(of("{t}:u", FW.named("per:min{x}~%")))
                .as("braces, colons, tildes and percents of a name are escaped: the key's tag stays the tag")
                .isEqualTo("sluice:fw@per%3Amin%7Bx%7D%7E%25:{t}:u");
        assertThat(RedisKeys.slot(RedisKeys.of("sluice:", "user:42", FW.named("{a}"))))
                .isEqualTo(RedisKeys.slot(RedisKeys.of("sluice:", "user:42", TB)));
    }

    @Test
    void namedAndUnnamedKeysNeverCollide() {
        Set<String> seen = new HashSet<>();
        for (String k : List.of("x", "{x}", "x}", ":x", "@api{x}", "api{x}", "%7B", "{", "}")) {
            for (Limit l : List.of(
                    TB,
                    FW,
                    TB.named("api"),
                    TB.named("api{x}"),
                    TB.named("api:"),
                    TB.named("api%3A"),
                    TB.named("a~"),
                    TB.named("10:1:1000000000"),
                    FW.named("api"))) {
                assertThat(seen.add(of(k, l))).as("%s under %s", k, l).isTrue();
            }
        }
    }

    @Test
    void prefixesWithBracesAndUnpairedSurrogatesAreRejected() {
        assertThatThrownBy(() -> RedisKeys.checkPrefix("app{1}:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("app{1}:");
        assertThatThrownBy(() -> RedisKeys.of("sluice:", "k\uDC00", TB))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("index 1");
        assertThat(of("🚦", TB)).endsWith("{🚦}");
    }
}
