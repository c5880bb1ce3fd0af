package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import dev.fenceline.testkit.TestCertificates;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * PKCS#12 stores with the wrong contents are refused when the transport's TLS contexts are made,
 * naming the key and the file, rather than at every handshake later.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsContextsTest {
    @TempDir
    Path dir;
    private TestCertificates certs;

    @BeforeEach
    void certificates() {
        certs = TestCertificates.create(dir, "a", "b");
    }

    private static TlsContexts create(Config tls) {
        TcpSettings s = TcpSettings.fromSection(tls.withFallback(ConfigFactory.defaultReference()).resolve()
                .getConfig(TcpSettings.SECTION));
        return TlsContexts.create(s.security().tls(), "w", Duration.ofSeconds(1));
    }

    /** @return a's configuration with {@code key} set to {@code store} */
    private Config with(String key, Path store) {
        return ConfigFactory.parseMap(Map.of(TcpSettings.SECTION + "." + key, store.toString()))
                .withFallback(certs.tcpConfig("a"));
    }

    private void assertRefused(String key, Path store, String why) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> create(with(key, store)));
        assertTrue(e.getMessage().startsWith(TcpSettings.SECTION + "." + key + " = " + store + " is invalid"),
                e.getMessage());
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    @Test
    void theTestMaterialIsAccepted() {
        assertTrue(create(certs.tcpConfig("a")).toString().startsWith("mutual TLS"));
    }

    /** A certificate whose subject is empty (its names in the subject alternative name) proves it as a TLS peer, not as a member. */
    @Test
    void anEmptySubjectIsNeverTakenForMembership() {
        assertEquals(TlsContexts.EMPTY_SUBJECT, TlsContexts.proofOf(""));
        assertTrue(!TlsContexts.proofOf("").equals(dev.fenceline.spi.support.ExactlyOnceWindows.MEMBER));
        assertEquals("CN=node-1,O=fenceline", TlsContexts.proofOf("CN=node-1,O=fenceline"));
    }

    /** The key and trust stores swapped: each is refused by its own key. */
    @Test
    void swappedStoresAreRefusedByTheirKeys() {
        assertRefused("tls.trust-store", certs.member("a").keyStore(), "0 trusted-certificate entries");
        assertRefused("tls.key-store", certs.trustStore(), "it has 0 private-key");
    }

    /** A store with no entries at all, as openssl pkcs12 -export -nokeys makes without the JDK's trust attribute. */
    @Test
    void anEmptyTrustStoreIsRefused() throws Exception {
        Path empty = dir.resolve("empty.p12");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        store(ks, empty);
        assertRefused("tls.trust-store", empty, "at least one trusted-certificate entry");
    }

    /** Two keys would make the worker's identity depend on which one the engine picks. */
    @Test
    void aKeyStoreWithTwoKeysIsRefused() throws Exception {
        KeyStore both = load(certs.member("a").keyStore());
        KeyStore.PasswordProtection p = new KeyStore.PasswordProtection(certs.password().toCharArray());
        both.setEntry("b", load(certs.member("b").keyStore()).getEntry("b", p), p);
        Path two = dir.resolve("two.p12");
        store(both, two);
        assertRefused("tls.key-store", two, "exactly one private-key entry");
    }

    @Test
    void aKeyStoreCertificateOutsideItsValidityIsRefused() throws Exception {
        for (String start : List.of("-10d", "+1d")) {
            assertRefused("tls.key-store", dated(start), "a certificate valid now ('dated', CN=dated, is valid from");
        }
    }

    /** The same in PEM files: the worker's certificate, the chain's first, is checked when the contexts are made. */
    @Test
    void aPemCertificateOutsideItsValidityIsRefused() throws Exception {
        for (String start : List.of("-10d", "+1d")) {
            KeyStore ks = load(dated(start));
            Path crt = dir.resolve("dated" + start + ".crt.pem");
            Path key = dir.resolve("dated" + start + ".key.pem");
            Files.writeString(crt, pem("CERTIFICATE", ks.getCertificate("dated").getEncoded()));
            Files.writeString(key, pem("PRIVATE KEY", ks.getKey("dated", certs.password().toCharArray()).getEncoded()));
            Config c = ConfigFactory.parseMap(Map.of(TcpSettings.SECTION + ".tls.certificate", crt.toString(),
                    TcpSettings.SECTION + ".tls.private-key", key.toString()))
                    .withFallback(certs.tcpPemConfig(certs.member("a")));
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> create(c));
            assertTrue(e.getMessage().startsWith(TcpSettings.SECTION + ".tls.certificate = " + crt + " is invalid")
                    && e.getMessage().contains("a certificate valid now (CN=dated, is valid from"), e.getMessage());
        }
    }

    /** One PEM file holding the chain and the key, named as both: the certificate's check reads its certificate only. */
    @Test
    void aPemFileHoldingTheKeyToo() throws Exception {
        TestCertificates.Member a = certs.member("a");
        Path both = dir.resolve("a.both.pem");
        Files.writeString(both, Files.readString(a.certificate()) + Files.readString(a.privateKey()));
        Config c = ConfigFactory.parseMap(Map.of(TcpSettings.SECTION + ".tls.certificate", both.toString(),
                TcpSettings.SECTION + ".tls.private-key", both.toString())).withFallback(certs.tcpPemConfig(a));
        assertTrue(create(c).toString().startsWith("mutual TLS"));
    }

    /** @return a PKCS#12 store of one key, "dated", whose certificate is valid for a day from {@code start} */
    private Path dated(String start) throws Exception {
        Path store = dir.resolve("dated" + start + ".p12");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "dated", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=dated", "-startdate", start, "-validity", "1", "-storetype", "PKCS12", "-keystore",
                store.toString(), "-storepass", certs.password(), "-keypass", certs.password())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, p.waitFor(), "keytool");
        return store;
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + java.util.Base64.getMimeEncoder(64, new byte[] {'\n'})
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private KeyStore load(Path file) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, certs.password().toCharArray());
        }
        return ks;
    }

    private void store(KeyStore ks, Path file) throws Exception {
        try (OutputStream out = Files.newOutputStream(file)) {
            ks.store(out, certs.password().toCharArray());
        }
    }
}
