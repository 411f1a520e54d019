package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The test helper itself: a port another process took before PostgreSQL listens is not a failed test. */
class FreePortPostgresTest {

    @Test
    void aPortTakenBeforeTheServerListensIsLeftForAnother() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread closer = new Thread(
                    () -> { // a server that is not PostgreSQL: it hangs up at once
                        while (!taken.isClosed()) {
                            try (Socket s = taken.accept()) {
                                s.setSoLinger(true, 0);
                            } catch (java.io.IOException e) {
                                // closed: the test is over
                            }
                        }
                    });
            closer.setDaemon(true);
            closer.start();
            List<Integer> given = new ArrayList<>();
            FreePortPostgres.Started started = FreePortPostgres.start(
                    () -> {
                        int port = given.isEmpty() ? taken.getLocalPort() : FreePortPostgres.freePort();
                        given.add(port);
                        return port;
                    },
                    b -> b);
            try (Connection c = started.postgres().getPostgresDatabase().getConnection();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("show data_directory")) {
                assertThat(given).hasSize(2).first().isEqualTo(taken.getLocalPort());
                assertThat(started.attempt()).isEqualTo(2);
                assertThat(started.postgres().getPort()).isEqualTo(given.get(1));
                rs.next();
                assertThat(Path.of(rs.getString(1)).toRealPath())
                        .isEqualTo(started.root().resolve("data").toRealPath());
            } finally {
                started.postgres().close();
                FreePortPostgres.delete(started.root());
            }
        }
    }
}
