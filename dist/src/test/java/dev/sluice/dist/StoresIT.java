package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime in the tarball holds what the stores need at run time, which {@code jdeps} does not all see: Lettuce
 * and Netty on a real Redis, pgjdbc and HikariCP on a real PostgreSQL, over TLS with an elliptic-curve certificate
 * (a handshake that fails without {@code jdk.crypto.ec}). Run as on a host without Java ({@link Distribution#noJdk}).
 */
class StoresIT {
    @TempDir
    Path dir;

    @Test
    void decidesOnRedis() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            try (Served s = Served.example(dir, "--grpc", "off", "--store", redis.uri())) {
                assertThat(s.get("/readyz").body())
                        .contains("\"status\":\"ready\"")
                        .contains("\"store\":\"redis\"");
                Served.Answer ok = s.check("example", "user", "alice");
                assertThat(ok.status()).isEqualTo(200);
                assertThat(ok.json().at("/statuses/0/remaining").asLong()).isEqualTo(9);
                assertThat(redis.command(null, "DBSIZE"))
                        .as("the decision's state is in Redis (DBSIZE's reply)")
                        .startsWith(":")
                        .doesNotStartWith(":0\r");
                s.stopsCleanly();
            }
        }
    }

    @Test
    void decidesOnPostgresqlOverTlsWithAnEllipticCurveCertificate() throws Exception {
        Path key = dir.resolve("server.key");
        Path cert = dir.resolve("server.crt");
        ellipticCurveCertificate(key, cert);
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setServerConfig("ssl", "on")
                .setServerConfig("ssl_cert_file", cert.toString())
                .setServerConfig("ssl_key_file", key.toString())
                .setServerConfig("ssl_min_protocol_version", "TLSv1.3")
                .start()) {
            String store = "postgresql://postgres@127.0.0.1:" + pg.getPort() + "/postgres?sslmode=require";
            try (Served s = Served.example(dir, "--grpc", "off", "--store", store, "--pool-size", "2")) {
                assertThat(s.get("/readyz").body())
                        .contains("\"status\":\"ready\"")
                        .contains("\"store\":\"postgres\"");
                Served.Answer ok = s.check("example", "user", "alice");
                assertThat(ok.status()).isEqualTo(200);
                assertThat(ok.json().at("/statuses/0/remaining").asLong()).isEqualTo(9);
                try (Connection c = pg.getPostgresDatabase().getConnection();
                        Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("select count(*) filter (where s.ssl), count(*)"
                                + " from pg_stat_activity a join pg_stat_ssl s using (pid)"
                                + " where a.backend_type = 'client backend' and a.pid <> pg_backend_pid()")) {
                    rs.next();
                    assertThat(rs.getInt(2)).as("the service's connections").isEqualTo(2);
                    assertThat(rs.getInt(1)).as("of them over TLS").isEqualTo(2);
                }
                s.stopsCleanly();
            }
        }
    }

    /**
     * A self-signed P-256 certificate and its key in PEM, as PostgreSQL reads them: made by the build JDK's keytool,
     * the key written out by this JVM (keytool exports no private key), readable by its owner alone.
     */
    private void ellipticCurveCertificate(Path key, Path cert) throws Exception {
        Path store = dir.resolve("server.p12");
        char[] password = "changeit".toCharArray();
        Distribution.Run keytool = Distribution.run(
                Map.of(),
                List.of(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-alias",
                        "server",
                        "-dname",
                        "CN=127.0.0.1",
                        "-validity",
                        "2",
                        "-keystore",
                        store.toString(),
                        "-storetype",
                        "PKCS12",
                        "-storepass",
                        new String(password)));
        assertThat(keytool.exit()).as(keytool.stderr()).isZero();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(store)) {
            ks.load(in, password);
        }
        Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate("server").getEncoded()));
        Files.createFile(key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(key, pem("PRIVATE KEY", ks.getKey("server", password).getEncoded()));
    }

    private static String pem(String type, byte[] der) {
        String base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + base64 + "\n-----END " + type + "-----\n";
    }
}
