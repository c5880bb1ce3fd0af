package dev.fenceline.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates for mutual-TLS tests and demos, made on the fly: a private CA, member certificates
 * it signs (for TLS client and server use, naming 127.0.0.1 and the member), and, for the refusal
 * cases, certificates it does not sign. Each member's material is written as a PKCS#12 key store
 * and as PEM files (certificate chain, PKCS#8 key); the CA as a PKCS#12 trust store and a PEM file.
 * Keys are EC P-256. Files are readable by their owner only.
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.create(tempDir, "node-1", "node-2");
 * Config a = certs.tcpConfig("node-1").withFallback(...);   // security = tls with node-1's key store
 * Config rogue = certs.untrusted("mallory");                  // a certificate the CA never signed
 * }</pre>
 */
public final class TestCertificates {
    /**
     * One certificate's files.
     *
     * @param name the member's name (its certificate's CN)
     * @param keyStore its PKCS#12 key store (key and chain), under {@link #password()}
     * @param certificate its certificate chain, PEM, leaf first
     * @param privateKey its private key, PEM (PKCS#8, not encrypted)
     */
    public record Member(String name, Path keyStore, Path certificate, Path privateKey) {
    }

    private static final SecureRandom RANDOM = new SecureRandom();
    private final Path dir;
    private final String password;
    private final KeyPair caKeys;
    private final X509Certificate ca;
    private final Path trustStore;
    private final Path caPem;
    private final Map<String, Member> members = new LinkedHashMap<>();

    private TestCertificates(Path dir, String password, KeyPair caKeys, X509Certificate ca, Path trustStore,
            Path caPem) {
        this.dir = dir;
        this.password = password;
        this.caKeys = caKeys;
        this.ca = ca;
        this.trustStore = trustStore;
        this.caPem = caPem;
    }

    /**
     * Makes a CA and one member certificate per name in {@code dir}.
     *
     * @param dir where the files go (created if absent)
     * @param names the members, e.g. {@code node-1}; each becomes {@code CN=<name>,O=fenceline-test}
     * @return the certificates
     */
    public static TestCertificates create(Path dir, String... names) {
        try {
            Files.createDirectories(dir);
            String password = Long.toHexString(RANDOM.nextLong());
            KeyPair caKeys = keys();
            X500Name caName = new X500Name("CN=fenceline test CA,O=fenceline-test");
            X509Certificate ca = sign(caName, caKeys, null, caKeys.getPrivate(), true, null);
            Path trustStore = dir.resolve("ca-trust.p12");
            KeyStore ts = KeyStore.getInstance("PKCS12");
            ts.load(null, null);
            ts.setCertificateEntry("ca", ca);
            store(ts, trustStore, password);
            Path caPem = write(dir.resolve("ca.pem"), pem("CERTIFICATE", ca.getEncoded()));
            TestCertificates c = new TestCertificates(dir, password, caKeys, ca, trustStore, caPem);
            for (String n : names) {
                c.members.put(n, c.issue(n, true));
            }
            return c;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make test certificates: " + e, e);
        }
    }

    /**
     * @param name a name given to {@link #create}
     * @return the member certificate made for it
     */
    public Member member(String name) {
        Member m = members.get(name);
        if (m == null) {
            throw new IllegalArgumentException("no member '" + name + "' among " + members.keySet());
        }
        return m;
    }

    /**
     * @param name a name for it
     * @return a self-signed certificate the CA never vouched for (a peer that must be refused)
     */
    public Member untrusted(String name) {
        try {
            return issue(name, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a test certificate: " + e, e);
        }
    }

    /** @return the password of every key and trust store made here */
    public String password() {
        return password;
    }

    /** @return a PKCS#12 trust store holding the CA */
    public Path trustStore() {
        return trustStore;
    }

    /** @return the CA certificate, PEM */
    public Path caCertificate() {
        return caPem;
    }

    /**
     * The tcp transport's TLS settings for {@code m}: its PKCS#12 key store and the CA's trust store.
     *
     * @param m a member (or an untrusted certificate)
     * @return {@code fenceline.transport.tcp.security = tls} and the {@code tls.*} keys
     */
    public Config tcpConfig(Member m) {
        return ConfigFactory.parseMap(Map.of(
                "fenceline.transport.tcp.security", "tls",
                "fenceline.transport.tcp.tls.key-store", m.keyStore().toString(),
                "fenceline.transport.tcp.tls.key-store-password", password,
                "fenceline.transport.tcp.tls.trust-store", trustStore.toString(),
                "fenceline.transport.tcp.tls.trust-store-password", password));
    }

    /**
     * @param name a name given to {@link #create}
     * @return {@link #tcpConfig(Member)} of that member
     */
    public Config tcpConfig(String name) {
        return tcpConfig(member(name));
    }

    /**
     * The same as {@link #tcpConfig(Member)} from the PEM files.
     *
     * @param m a member
     * @return the {@code tls.certificate}, {@code tls.private-key} and {@code tls.trusted-certificates} keys
     */
    public Config tcpPemConfig(Member m) {
        return ConfigFactory.parseMap(Map.of(
                "fenceline.transport.tcp.security", "tls",
                "fenceline.transport.tcp.tls.certificate", m.certificate().toString(),
                "fenceline.transport.tcp.tls.private-key", m.privateKey().toString(),
                "fenceline.transport.tcp.tls.trusted-certificates", caPem.toString()));
    }

    private Member issue(String name, boolean signedByCa) throws IOException, GeneralSecurityException,
            OperatorCreationException {
        KeyPair keys = keys();
        X500Name subject = new X500Name("CN=" + name + ",O=fenceline-test");
        X509Certificate cert = signedByCa ? sign(subject, keys, ca, caKeys.getPrivate(), false, name)
                : sign(subject, keys, null, keys.getPrivate(), false, name);
        Certificate[] chain = signedByCa ? new Certificate[] {cert, ca} : new Certificate[] {cert};
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry(name, keys.getPrivate(), password.toCharArray(), chain);
        Path store = dir.resolve(name + ".p12");
        store(ks, store, password);
        StringBuilder chainPem = new StringBuilder();
        for (Certificate c : chain) {
            chainPem.append(pem("CERTIFICATE", c.getEncoded()));
        }
        Path certificate = write(dir.resolve(name + ".crt.pem"), chainPem.toString());
        Path key = write(dir.resolve(name + ".key.pem"), pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        return new Member(name, store, certificate, key);
    }

    private static KeyPair keys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256, RANDOM);
        return g.generateKeyPair();
    }

    /** @param issuer the signing CA's certificate, or null for a self-signed one */
    private static X509Certificate sign(X500Name subject, KeyPair subjectKeys, X509Certificate issuer,
            PrivateKey issuerKey, boolean isCa, String dnsName)
            throws GeneralSecurityException, IOException, OperatorCreationException {
        Instant now = Instant.now();
        BigInteger serial = new BigInteger(64, RANDOM).abs();
        Date from = Date.from(now.minus(Duration.ofHours(1)));
        Date to = Date.from(now.plus(Duration.ofDays(30)));
        X509v3CertificateBuilder b = issuer == null
                ? new JcaX509v3CertificateBuilder(subject, serial, from, to, subject, subjectKeys.getPublic())
                : new JcaX509v3CertificateBuilder(issuer, serial, from, to,
                        new javax.security.auth.x500.X500Principal(subject.getEncoded()), subjectKeys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(isCa));
        if (isCa) {
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } else {
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[] {
                KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, dnsName), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
        }
        return new JcaX509CertificateConverter().getCertificate(b.build(
                new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    }

    private static void store(KeyStore ks, Path file, String password) throws IOException, GeneralSecurityException {
        try (OutputStream out = Files.newOutputStream(file)) {
            ks.store(out, password.toCharArray());
        }
        ownerOnly(file);
    }

    private static Path write(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.US_ASCII);
        ownerOnly(file);
        return file;
    }

    private static void ownerOnly(Path file) throws IOException {
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
