package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code sluice migrate} says what it created, then that nothing was needed, on a real PostgreSQL. */
class MigrateCommandTest {

    @Test
    void saysWhatItCreatedOnAFreshDatabaseAndThatNothingWasNeededAfter() throws Exception {
        try (EmbeddedPostgres pg =
                EmbeddedPostgres.builder().setServerConfig("fsync", "off").start()) {
            String uri = "postgresql://postgres@localhost:" + pg.getPort() + "/postgres";

            String fresh = migrate(uri);
            assertThat(fresh)
                    .startsWith(
                            "sluice migrate: created 5 tables (sluice_bucket, sluice_in_flight, sluice_log, sluice_pending,"
                                    + " sluice_window), ")
                    .contains(" indexes and 27 functions in schema public on postgresql://postgres@localhost:"
                            + pg.getPort() + "/postgres");

            assertThat(migrate(uri))
                    .isEqualTo("sluice migrate: nothing to do: the Sluice schema in public was already "
                            + "up to date on postgresql://postgres@localhost:" + pg.getPort() + "/postgres\n");
        }
    }

    private static String migrate(String uri) {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            assertThat(SluiceCommand.commandLine().execute("migrate", "--store", uri))
                    .isZero();
        } finally {
            System.setOut(out);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
