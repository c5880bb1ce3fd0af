package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import dev.fenceline.ConfigurationException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** TcpSettings reads reference.conf's defaults, reads every documented key and refuses invalid values by full key. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpSettingsTest {
    private static final String SECRET = "0123456789abcdef-secret";

    private static TcpSettings settings(String hocon) {
        return TcpSettings.fromSection(ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference()).resolve().getConfig(TcpSettings.SECTION));
    }

    private static TcpSettings withSecret(String hocon) {
        return settings("fenceline.transport.tcp { secret = \"" + SECRET + "\"\n" + hocon + "\n}");
    }

    /** @return the message of the ConfigurationException, checked to name the full key */
    private static String refused(String key, String hocon) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> withSecret(hocon), hocon);
        assertTrue(e.getMessage().startsWith(TcpSettings.SECTION + "." + key + " "), e.getMessage());
        return e.getMessage();
    }

    @Test
    void defaultsFromReferenceConf() {
        TcpSettings s = withSecret("");
        assertEquals(List.of(new InetSocketAddress("127.0.0.1", 0)), s.listen());
        assertEquals(4, s.maxRails());
        assertEquals(SECRET, s.security().passphrase());
        assertFalse(s.security().tlsOn(), "security = secret by default");
        assertFalse(s.toString().contains(SECRET), "settings never print the secret");
        assertEquals("auto", s.io());
        assertEquals(1, s.ioThreads());
        assertEquals(Duration.ofSeconds(5), s.connectTimeout());
        assertEquals(Duration.ofSeconds(2), s.userTimeout());
        assertEquals(List.of(Duration.ofSeconds(60), Duration.ofSeconds(5), 3),
                List.of(s.keepaliveIdle(), s.keepaliveInterval(), s.keepaliveCount()));
        assertEquals(List.of(Duration.ofMillis(100), Duration.ofSeconds(2), Duration.ofMinutes(10)),
                List.of(s.minBackoff(), s.maxBackoff(), s.giveUpAfter()));
        assertEquals(256 << 10, s.maxFragment());
        assertEquals(1024, s.queueDepth());
        assertEquals(16L << 20, s.window());
    }

    @Test
    void everyKeyOfTheSectionIsRead() {
        Set<String> documented = new TreeSet<>();
        for (Map.Entry<String, ConfigValue> e : ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION)
                .entrySet()) {
            documented.add(TcpSettings.SECTION + "." + e.getKey());
        }
        assertEquals(documented, new TreeSet<>(withSecret("").keysRead()));
    }

    @Test
    void missingSecretIsRefused() {
        assumeTrue(System.getenv("FENCELINE_TCP_SECRET") == null, "FENCELINE_TCP_SECRET supplies a secret");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(""));
        assertTrue(e.getMessage().startsWith(TcpSettings.SECTION + ".secret "), e.getMessage());
    }

    @Test
    void shortSecretIsRefusedWithoutEchoingIt() {
        String message = refused("secret", "secret = \"Hunter2-Xyzzy15\"");
        assertFalse(message.contains("Hunter2"), message);
        assertTrue(message.contains("16"), message);
        assertEquals("Hunter2-Xyzzy-16", withSecret("secret = \"Hunter2-Xyzzy-16\"").security().passphrase()); // 16 suffice
    }

    @Test
    void aSecretOfTheWrongTypeIsNotEchoedEither() {
        String message = refused("secret", "secret = [\"Hunter2-Xyzzy-Plugh-17\"]");
        assertFalse(message.contains("Hunter2"), message);
    }

    @Test
    void listenAddresses() {
        assertEquals(List.of(new InetSocketAddress("::1", 7000), new InetSocketAddress("127.0.0.2", 65535)),
                withSecret("listen = [\"[::1]:7000\", \"127.0.0.2:65535\"]").listen());
        for (String wildcard : List.of("0.0.0.0:7000", "[::]:7000", "[0:0:0:0:0:0:0:0]:0")) {
            assertTrue(refused("listen", "listen = [\"" + wildcard + "\"]").contains("wildcard"), wildcard);
        }
        for (String bad : List.of("127.0.0.1", "127.0.0.1:", ":7000", "127.0.0.1:http", "127.0.0.1:65536",
                "127.0.0.1:-1", "[::1:7000")) {
            assertTrue(refused("listen", "listen = [\"" + bad + "\"]").contains(bad), bad);
        }
        refused("listen", "listen = []");
    }

    @Test
    void theWorkersWindowCoversEveryOperationInFlight() {
        com.typesafe.config.Config section = ConfigFactory.parseString("secret = \"" + SECRET
                + "\"\nmax-rails = 4\nqueue-depth = 1024").withFallback(ConfigFactory.defaultReference()
                .getConfig(TcpSettings.SECTION));
        dev.fenceline.ConfigurationException e = assertThrows(dev.fenceline.ConfigurationException.class,
                () -> new TcpTransport(new dev.fenceline.spi.TransportContext(java.util.UUID.randomUUID(), "w", section,
                        null, new dev.fenceline.spi.support.ExactlyOnceWindows("w", 4095, Duration.ofMinutes(1), 1 << 20,
                                1 << 22, System::nanoTime)), TcpSettings.fromSection(section)));
        assertTrue(e.getMessage().contains("fenceline.exactly-once.window = 4095") && e.getMessage().contains("4096"),
                e.getMessage());
    }

    @Test
    void keepaliveCountsWholeSeconds() {
        for (String fraction : List.of("1500ms", "2.5s", "1001ms", "1000500us", "1.0000001s")) {
            refused("keepalive.idle", "keepalive.idle = " + fraction);
            refused("keepalive.interval", "keepalive.interval = " + fraction);
        }
        TcpSettings s = withSecret("keepalive { idle = 7200s, interval = 2000ms }");
        assertEquals(List.of(Duration.ofHours(2), Duration.ofSeconds(2)), List.of(s.keepaliveIdle(),
                s.keepaliveInterval()));
    }

    /** TCP_USER_TIMEOUT counts milliseconds, so a non-zero value under 1ms would silently mean the kernel default. */
    @Test
    void aUserTimeoutUnderOneMillisecondIsRefused() {
        for (String tiny : List.of("500us", "1ns", "999999ns")) {
            String message = refused("user-timeout", "user-timeout = " + tiny);
            assertTrue(message.contains("1ms"), message);
        }
        assertEquals(Duration.ZERO, withSecret("user-timeout = 0").userTimeout());
        assertEquals(Duration.ofMillis(1), withSecret("user-timeout = 1ms").userTimeout());
    }

    /** A congestion control is the kernel's name for one, or empty for the kernel's default. */
    @Test
    void aCongestionControlIsAKernelName() {
        assertEquals("", withSecret("").congestionControl());
        assertEquals("cubic", withSecret("congestion-control = cubic").congestionControl());
        assertEquals("bbr_2", withSecret("congestion-control = bbr_2").congestionControl());
        assertEquals("fifteen_letters", withSecret("congestion-control = fifteen_letters").congestionControl());
        for (String bad : List.of("Cubic", "\"cubic \"", "\"../cubic\"", "sixteen_letters_", "\"c-ubic\"")) {
            String message = refused("congestion-control", "congestion-control = " + bad);
            assertTrue(message.contains("1 to 15"), message);
        }
    }

    @Test
    void rangesAndTypesAreChecked() {
        refused("max-rails", "max-rails = 17");
        refused("io", "io = uring");
        refused("queue-depth", "queue-depth = lots");
        refused("max-fragment", "max-fragment = 1KiB");
        refused("reconnect.max-backoff", "reconnect { min-backoff = 1s, max-backoff = 500ms }");
    }

    /** A key file must be a regular file of 32 to 4096 bytes that only its owner can read; its bytes are never shown. */
    @Test
    void aKeyFileIsCheckedLikeAPrivateKey(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        assumeTrue(System.getenv("FENCELINE_TCP_SECRET") == null, "FENCELINE_TCP_SECRET supplies a secret");
        java.nio.file.Path key = dir.resolve("key");
        byte[] random = new byte[32];
        new java.security.SecureRandom().nextBytes(random);
        java.nio.file.Files.write(key, random);
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString(
                "rw-------"));
        TcpSettings s = settings("fenceline.transport.tcp.secret-file = \"" + key + "\"");
        org.junit.jupiter.api.Assertions.assertArrayEquals(random, s.security().key());
        assertTrue(s.security().hasSecret());
        assertFalse(s.toString().contains(java.util.HexFormat.of().formatHex(random)), s.toString());

        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString(
                "rw-r-----"));
        assertRefusedFile(key, "only its owner");
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString(
                "rw-------"));
        java.nio.file.Path link = dir.resolve("link");
        java.nio.file.Files.createSymbolicLink(link, key);
        assertRefusedFile(link, "not a link");
        java.nio.file.Path shortKey = dir.resolve("short");
        java.nio.file.Files.write(shortKey, new byte[31]);
        java.nio.file.Files.setPosixFilePermissions(shortKey, java.nio.file.attribute.PosixFilePermissions.fromString(
                "rw-------"));
        assertRefusedFile(shortKey, "not 31");
        assertRefusedFile(dir.resolve("absent"), "readable");
        ConfigurationException both = assertThrows(ConfigurationException.class, () -> settings(
                "fenceline.transport.tcp { secret = \"" + SECRET + "\", secret-file = \"" + key + "\" }"));
        assertTrue(both.getMessage().contains("not both"), both.getMessage());
    }

    private static void assertRefusedFile(java.nio.file.Path file, String why) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(
                "fenceline.transport.tcp.secret-file = \"" + file + "\""));
        assertTrue(e.getMessage().startsWith(TcpSettings.SECTION + ".secret-file "), e.getMessage());
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    /** security = tls needs one form of key material and one of trust material, and no secret. */
    @Test
    void tlsNeedsItsMaterial(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        assumeTrue(System.getenv("FENCELINE_TCP_SECRET") == null, "FENCELINE_TCP_SECRET supplies a secret");
        dev.fenceline.testkit.TestCertificates certs = dev.fenceline.testkit.TestCertificates.create(dir, "m");
        TcpSettings s = TcpSettings.fromSection(certs.tcpConfig("m").withFallback(ConfigFactory.defaultReference())
                .resolve().getConfig(TcpSettings.SECTION));
        assertTrue(s.security().tlsOn());
        assertFalse(s.security().hasSecret(), "no secret needed with tls");
        assertFalse(s.toString().contains(certs.password()), "passwords are never printed: " + s);
        ConfigurationException noTrust = assertThrows(ConfigurationException.class, () -> settings(
                "fenceline.transport.tcp { security = tls, tls.key-store = \"" + certs.member("m").keyStore() + "\" }"));
        assertTrue(noTrust.getMessage().startsWith(TcpSettings.SECTION + ".tls.trust-store "), noTrust.getMessage());
        ConfigurationException noKey = assertThrows(ConfigurationException.class, () -> settings(
                "fenceline.transport.tcp { security = tls, tls.trusted-certificates = \"" + certs.caCertificate()
                        + "\" }"));
        assertTrue(noKey.getMessage().startsWith(TcpSettings.SECTION + ".tls.key-store "), noKey.getMessage());
        ConfigurationException missing = assertThrows(ConfigurationException.class, () -> settings(
                "fenceline.transport.tcp { security = tls, tls.key-store = \"" + dir.resolve("nope.p12")
                        + "\", tls.trusted-certificates = \"" + certs.caCertificate() + "\" }"));
        assertTrue(missing.getMessage().contains("nope.p12") && missing.getMessage().contains("readable"),
                missing.getMessage());
        ConfigurationException tls11 = assertThrows(ConfigurationException.class, () -> settings(
                "fenceline.transport.tcp { security = tls, tls.key-store = \"" + certs.member("m").keyStore()
                        + "\", tls.trusted-certificates = \"" + certs.caCertificate() + "\", tls.protocols = [TLSv1.1] }"));
        assertTrue(tls11.getMessage().startsWith(TcpSettings.SECTION + ".tls.protocols "), tls11.getMessage());
    }
}
