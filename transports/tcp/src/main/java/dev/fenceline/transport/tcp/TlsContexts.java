package dev.fenceline.transport.tcp;

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
import java.time.Duration;
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
     * @throws FencelineException naming the file and the reason when the material cannot be used
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
        f.init(load(store, password), password.toCharArray());
        return f;
    }

    private static TrustManagerFactory trust(Path store, String password) throws IOException, GeneralSecurityException {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(load(store, password));
        return f;
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
            return tls.engine().getSession().getPeerPrincipal().getName();
        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            // Client authentication is required, so a verified peer is certain here; be safe anyway.
            throw new IllegalStateException("a TLS peer without a verified certificate reached the handshake", e);
        }
    }

    @Override
    public String toString() {
        return summary;
    }
}
