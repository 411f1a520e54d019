package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import org.junit.jupiter.api.Test;

/** {@link RedisFailures#reply}: an error a script raised reads as Redis 7 gives it, on Redis 6 too. */
class RedisFailuresReplyTest {
    private static final String WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";

    @Test
    void redis6sWordsAroundAScriptsErrorAreDropped() {
        String redis6 =
                "ERR Error running script (call to f_1e7d67e243fbd2334acf093da60afb970d5bd5a4): @user_script:134: "
                        + WRONGTYPE;
        assertThat(RedisFailures.reply(new RedisCommandExecutionException(redis6)))
                .isEqualTo(WRONGTYPE);
        assertThat(RedisFailures.reply(new RedisCommandExecutionException(WRONGTYPE)))
                .isEqualTo(WRONGTYPE);
    }

    @Test
    void aReplyThatMeansRedisCannotServeNowIsUnavailableOnEitherVersion() {
        String busy = "BUSY Redis is busy running a script";
        assertThat(RedisFailures.classify(new RedisCommandExecutionException(busy)))
                .isEqualTo(Degradation.UNAVAILABLE);
        assertThat(RedisFailures.classify(new RedisCommandExecutionException(
                        "ERR Error running script (call to f_0a1b): @user_script:7: " + busy)))
                .isEqualTo(Degradation.UNAVAILABLE);
        assertThat(RedisFailures.classify(new RedisCommandExecutionException(WRONGTYPE)))
                .isEqualTo(Degradation.STORE_ERROR);
    }

    @Test
    void otherMessagesAndOtherFailuresAreLeftAlone() {
        String other = "ERR Error running script (call to f_zz): something else";
        assertThat(RedisFailures.reply(new RedisCommandExecutionException(other)))
                .isEqualTo(other);
        String lettuce = "ERR Error running script (call to f_0a1b): @user_script:7: x";
        assertThat(RedisFailures.reply(new RedisException(lettuce))).isEqualTo(lettuce);
    }
}
