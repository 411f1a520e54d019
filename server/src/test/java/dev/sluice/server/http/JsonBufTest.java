package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.StringLength;

/** The hand-written JSON of the check answer reads back, through Jackson, as exactly what was written. */
class JsonBufTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Property(tries = 500)
    void numbersAreLongToString(@ForAll long v) {
        ByteBuf b = Unpooled.buffer(1);
        JsonBuf.number(b, v);
        assertThat(b.toString(StandardCharsets.US_ASCII)).isEqualTo(Long.toString(v));
    }

    @Property(tries = 60)
    void powersOfTenAndTheirNeighbours(@ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 18) int e) {
        long p = 1;
        for (int i = 0; i < e; i++) {
            p *= 10;
        }
        for (long v : new long[] {p - 1, p, p + 1, -p, Long.MAX_VALUE, Long.MIN_VALUE, 0}) {
            ByteBuf b = Unpooled.buffer(1);
            JsonBuf.number(b, v);
            assertThat(b.toString(StandardCharsets.US_ASCII)).isEqualTo(Long.toString(v));
        }
    }

    @Property(tries = 500)
    void stringsReadBackUnchanged(
            @ForAll
                    @StringLength(max = 40)
                    @CharRange(from = 0, to = 0x7f)
                    @CharRange(from = 0x2020, to = 0x2030)
                    @CharRange(from = 0x4e00, to = 0x4e10)
                    @Chars({'"', '\\', 'é'})
                    String s)
            throws Exception {
        ByteBuf b = Unpooled.buffer(1);
        JsonBuf.string(b, s);
        assertThat(JSON.readTree(b.toString(StandardCharsets.UTF_8)).textValue())
                .isEqualTo(s);
    }
}
