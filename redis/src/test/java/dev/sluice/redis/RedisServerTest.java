package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The test helper itself: a port another process took before the start is not a failed test. */
class RedisServerTest {

    @Test
    void aPortTakenBeforeTheStartIsLeftForAnother() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Integer> tried = new ArrayList<>();
            try (RedisServer server = RedisServer.start(args -> {
                RedisServer s =
                        tried.isEmpty() ? RedisServer.onPort(taken.getLocalPort(), args) : RedisServer.onFreePort(args);
                tried.add(s.port());
                return s;
            })) {
                assertThat(tried).hasSize(2).first().isEqualTo(taken.getLocalPort());
                assertThat(server.port()).isEqualTo(tried.get(1));
                assertThat(server.command(null, "PING")).startsWith("+PONG");
            }
        }
    }
}
