package dev.fenceline.transport.tcp;

import dev.fenceline.ConfigurationException;
import dev.fenceline.FencelineException;
import io.netty.channel.Channel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * Mutual TLS for the tcp transport, built once per transport from {@code tls.*}: the server side
 * requires a client certificate that the trust material vouches for, and the client side checks
 * the server's the same way. Both present this worker's own certificate.
 */
final class TlsContexts {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TlsContexts.class);
    private static final java.util.concurrent.atomic.AtomicBoolean UNAVAILABLE_LOGGED =
            new java.util.concurrent.atomic.AtomicBoolean();
    private final SslContext server;
    private final SslContext client;
    private final Duration handshakeTimeout;
    private final String summary;

    private TlsContexts(SslContext server, SslContext client, Duration handshakeTimeout, String summary) {
        this.server = server;
        this.client = client;
        this.handshakeTimeout = handshakeTimeout;
        this.summary = summary;
    }

    /**
     * @throws ConfigurationException naming the key and the file when a PKCS#12 store holds the wrong
     *     entries or the key store's certificate is not valid now
     * @throws FencelineException naming the file and the reason when the material cannot be used otherwise
     */
    static TlsContexts create(TcpSettings.Tls tls, String worker, Duration handshakeTimeout) {
        SslProvider provider = provider(tls);
        try {
            SslContextBuilder server;
            SslContextBuilder client;
            if (tls.keyStore() != null) {
                KeyManagerFactory keys = keys(tls.keyStore(), tls.keyStorePassword());
                server = SslContextBuilder.forServer(keys);
                client = SslContextBuilder.forClient().keyManager(keys);
            } else {
                checkCertificateFile(tls.certificate());
                String password = tls.privateKeyPassword().isEmpty() ? null : tls.privateKeyPassword();
                server = SslContextBuilder.forServer(tls.certificate().toFile(), tls.privateKey().toFile(), password);
                client = SslContextBuilder.forClient().keyManager(tls.certificate().toFile(),
                        tls.privateKey().toFile(), password);
            }
            if (tls.trustStore() != null) {
                TrustManagerFactory trust = trust(tls.trustStore(), tls.trustStorePassword());
                server.trustManager(trust);
                client.trustManager(trust);
            } else {
                server.trustManager(tls.trustedCertificates().toFile());
                client.trustManager(tls.trustedCertificates().toFile());
            }
            String[] protocols = tls.protocols().toArray(String[]::new);
            server.clientAuth(ClientAuth.REQUIRE).protocols(protocols).sslProvider(provider);
            // Peers are reached by the addresses they advertise; a certificate names that address
            // only if the deployment made it so, hence opt-in.
            client.protocols(protocols).sslProvider(provider)
                    .endpointIdentificationAlgorithm(tls.verifyHostname() ? "HTTPS" : null);
            String summary = "mutual TLS " + tls.protocols() + " (" + provider.name().toLowerCase(java.util.Locale.ROOT)
                    + ")";
            return new TlsContexts(server.build(), client.build(), handshakeTimeout, summary);
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            throw new FencelineException("tcp: worker '" + worker + "' cannot use its TLS material (" + tls + "): " + e,
                    e);
        }
    }

    private static SslProvider provider(TcpSettings.Tls tls) {
        if (tls.provider().equals("jdk")) {
            return SslProvider.JDK;
        }
        if (tls.provider().equals("auto")) {
            if (OpenSsl.isAvailable()) {
                return SslProvider.OPENSSL;
            }
            if (UNAVAILABLE_LOGGED.compareAndSet(false, true)) {
                LOG.info("tcp: TLS through the JDK's engine (tls.provider = auto): netty-tcnative is not usable here:"
                        + " {}", String.valueOf(OpenSsl.unavailabilityCause()));
            }
            return SslProvider.JDK;
        }
        if (!OpenSsl.isAvailable()) {
            throw new FencelineException("tcp: tls.provider = openssl, but netty-tcnative is not usable here: "
                    + OpenSsl.unavailabilityCause());
        }
        return SslProvider.OPENSSL;
    }

    private static KeyManagerFactory keys(Path store, String password) throws IOException, GeneralSecurityException {
        KeyManagerFactory f = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        KeyStore ks = load(store, password);
        checkKeyStore(ks, store);
        f.init(ks, password.toCharArray());
        return f;
    }

    private static TrustManagerFactory trust(Path store, String password) throws IOException, GeneralSecurityException {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyStore ks = load(store, password);
        checkTrustStore(ks, store);
        f.init(ks);
        return f;
    }

    /**
     * The worker presents one certificate, whose subject is its identity (its exactly-once state is
     * keyed by it), so the store holds exactly one key; checked here because the engine would
     * otherwise fail only at the first handshake, naming no key, while rails retry.
     */
    private static void checkKeyStore(KeyStore ks, Path store) throws GeneralSecurityException {
        List<String> keys = aliases(ks, true);
        if (keys.size() != 1) {
            throw invalid("tls.key-store", store, "a PKCS#12 key store with exactly one private-key entry, this"
                    + " worker's (" + contents(ks) + ")");
        }
        java.security.cert.Certificate leaf = ks.getCertificate(keys.get(0));
        if (leaf instanceof X509Certificate x) {
            try {
                x.checkValidity();
            } catch (CertificateExpiredException | CertificateNotYetValidException e) {
                throw invalid("tls.key-store", store, "a certificate valid now ('" + keys.get(0) + "', "
                        + x.getSubjectX500Principal() + ", is valid from " + x.getNotBefore().toInstant() + " to "
                        + x.getNotAfter().toInstant() + ")");
            }
        }
    }

    /** The PEM twin of the key store's check: the worker's certificate (the chain's first) is valid now. */
    private static void checkCertificateFile(Path file) throws IOException, GeneralSecurityException {
        // Its first CERTIFICATE block only: the file may hold other blocks (the key, say), which the
        // engine reads where it is told to, and the JDK's parser would refuse.
        String text = Files.readString(file, java.nio.charset.StandardCharsets.ISO_8859_1); // any byte
        String begin = "-----BEGIN CERTIFICATE-----";
        int from = text.indexOf(begin);
        int to = from < 0 ? -1 : text.indexOf("-----END CERTIFICATE-----", from);
        if (to < 0) {
            return; // not PEM as expected: the engine says what is wrong with it
        }
        byte[] der;
        try {
            der = java.util.Base64.getMimeDecoder().decode(text.substring(from + begin.length(), to));
        } catch (IllegalArgumentException notBase64) {
            return; // the same
        }
        if (java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(
                new java.io.ByteArrayInputStream(der)) instanceof X509Certificate x) {
            try {
                x.checkValidity();
            } catch (CertificateExpiredException | CertificateNotYetValidException e) {
                throw invalid("tls.certificate", file, "a certificate valid now (" + x.getSubjectX500Principal()
                        + ", is valid from " + x.getNotBefore().toInstant() + " to " + x.getNotAfter().toInstant()
                        + ")");
            }
        }
    }

    /** Without a trusted entry the engine fails at each handshake ("trustAnchors ... non-empty"), naming no key. */
    private static void checkTrustStore(KeyStore ks, Path store) throws GeneralSecurityException {
        if (aliases(ks, false).isEmpty()) {
            throw invalid("tls.trust-store", store, "a PKCS#12 trust store with at least one trusted-certificate"
                    + " entry (" + contents(ks) + "; a certificate stored without the trust attribute, as by openssl"
                    + " pkcs12 -export -nokeys, is none)");
        }
    }

    /** @return what a store holds, for a message: the key store and the trust store swapped show here */
    private static String contents(KeyStore ks) throws GeneralSecurityException {
        return "it has " + aliases(ks, true).size() + " private-key and " + aliases(ks, false).size()
                + " trusted-certificate entries";
    }

    /** @return the aliases of the store's private-key entries, or of its trusted-certificate entries */
    private static List<String> aliases(KeyStore ks, boolean keys) throws GeneralSecurityException {
        Class<? extends KeyStore.Entry> type = keys ? KeyStore.PrivateKeyEntry.class
                : KeyStore.TrustedCertificateEntry.class;
        List<String> found = new ArrayList<>();
        for (String a : Collections.list(ks.aliases())) {
            if (ks.entryInstanceOf(a, type)) {
                found.add(a);
            }
        }
        return found;
    }

    private static ConfigurationException invalid(String key, Path store, String expected) {
        return new ConfigurationException(TcpSettings.SECTION + "." + key + " = " + store + " is invalid: expected "
                + expected);
    }

    private static KeyStore load(Path store, String password) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, password.toCharArray());
        }
        return ks;
    }

    /** The server end of an accepted connection: it requires the client's certificate. */
    SslHandler server(Channel ch) {
        SslHandler h = server.newHandler(ch.alloc());
        h.setHandshakeTimeoutMillis(handshakeTimeout.toMillis());
        return h;
    }

    /** The client end of a connection to {@code remote}. */
    SslHandler client(Channel ch, InetSocketAddress remote) {
        SslHandler h = client.newHandler(ch.alloc(), remote.getHostString(), remote.getPort());
        h.setHandshakeTimeoutMillis(handshakeTimeout.toMillis());
        return h;
    }

    /**
     * What the peer of an authenticated connection proved beyond the worker id it claimed (its
     * handshake proof covers the id): under TLS its certificate's subject; else membership, by the
     * shared secret ({@link dev.fenceline.spi.support.ExactlyOnceWindows#MEMBER}). Exactly-once state
     * belongs to the worker id and this proof, so a peer can never reach the windows of one that
     * proved more by naming its ids.
     *
     * @param ch the connection
     * @return the proof
     */
    static String proof(Channel ch) {
        SslHandler tls = ch.pipeline().get(SslHandler.class);
        if (tls == null) {
            return dev.fenceline.spi.support.ExactlyOnceWindows.MEMBER;
        }
        try {
            return proofOf(tls.engine().getSession().getPeerPrincipal().getName());
        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            // Client authentication is required, so a verified peer is certain here; be safe anyway.
            throw new IllegalStateException("a TLS peer without a verified certificate reached the handshake", e);
        }
    }

    /** What a certificate with an empty subject proves (a name no subject renders as). */
    static final String EMPTY_SUBJECT = "<empty subject>";

    /**
     * @param subject a verified certificate's subject, as RFC 2253 renders it
     * @return the proof it gives: never {@link dev.fenceline.spi.support.ExactlyOnceWindows#MEMBER},
     *     which an empty subject (legal beside a subject alternative name) would otherwise be, sharing
     *     the members' windows and drawing on a budget per worker id it names instead of one for all
     */
    static String proofOf(String subject) {
        return subject.isEmpty() ? EMPTY_SUBJECT : subject;
    }

    @Override
    public String toString() {
        return summary;
    }
}
