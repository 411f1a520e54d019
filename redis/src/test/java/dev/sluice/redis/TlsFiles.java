package dev.sluice.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate and its key as PEM files, for a redis-server with {@code --tls-port}: made with the
 * JDK's own {@code keytool} (nothing to install), the key written out in PKCS#8 as OpenSSL reads it.
 */
final class TlsFiles {
    final Path cert;
    final Path key;

    private TlsFiles(Path cert, Path key) {
        this.cert = cert;
        this.key = key;
    }

    static TlsFiles in(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        Path store = dir.resolve("tls.p12");
        char[] pass = "changeit".toCharArray();
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        "redis",
                        "-keyalg",
                        "RSA",
                        "-keysize",
                        "2048",
                        "-validity",
                        "2",
                        "-dname",
                        "CN=localhost",
                        "-keystore",
                        store.toString(),
                        "-storetype",
                        "PKCS12",
                        "-storepass",
                        new String(pass),
                        "-keypass",
                        new String(pass))
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, pass);
        }
        Key k = ks.getKey("redis", pass);
        Certificate c = ks.getCertificate("redis");
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Files.writeString(cert, pem("CERTIFICATE", c.getEncoded()));
        Files.writeString(key, pem("PRIVATE KEY", k.getEncoded()));
        return new TlsFiles(cert, key);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
