package dev.fenceline.transport.tcp;

import com.typesafe.config.Config;
import dev.fenceline.spi.support.ConfigReader;
import dev.fenceline.spi.support.ReconnectPolicy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code fenceline.transport.tcp}, read and validated once (reference.conf documents each key).
 *
 * @param listen the addresses to listen on, one per rail
 * @param maxRails the most lanes per endpoint
 * @param security how peers authenticate and what protects the frames
 * @param io auto, epoll or nio
 * @param ioThreads event-loop threads
 * @param directWrites whether the endpoint's thread may write a frame into an idle lane's socket
 * @param busyPoll whether the epoll event loops spin rather than sleep while waiting for events
 * @param directOperations whether calling threads may post operations on a lane themselves, under the
 *     endpoint's grant (the fast path by grant)
 * @param activeMessageThreads threads that run active-message handlers, 0 for the event loops
 * @param connectTimeout TCP connect plus handshake
 * @param userTimeout TCP_USER_TIMEOUT, zero for the kernel default
 * @param keepaliveIdle TCP keepalive idle time
 * @param keepaliveInterval TCP keepalive probe interval
 * @param keepaliveCount TCP keepalive probes
 * @param congestionControl the TCP congestion control of this worker's lane sockets (TCP_CONGESTION,
 *     epoll only), empty for the kernel's default
 * @param minBackoff first reconnect delay
 * @param maxBackoff longest reconnect delay
 * @param giveUpAfter how long a failed rail is retried
 * @param stableAfter how long a rail must stay up for its next reconnect to start afresh
 * @param maxFragment largest operation payload
 * @param queueDepth unacknowledged operations per lane
 * @param window unacknowledged payload bytes per lane
 * @param maxRead the largest buffer one socket read fills
 * @param shutdownGrace how long closing the transport waits for its event loops to finish
 * @param limits what an incoming connection may cost before and after it authenticates
 * @param keysRead every key read, for the completeness test
 */
record TcpSettings(List<InetSocketAddress> listen, int maxRails, Security security, String io, int ioThreads,
        boolean directWrites, boolean directOperations, boolean busyPoll, int activeMessageThreads,
        Duration connectTimeout, Duration userTimeout, Duration keepaliveIdle, Duration keepaliveInterval,
        int keepaliveCount, String congestionControl, Duration minBackoff, Duration maxBackoff,
        Duration giveUpAfter, Duration stableAfter, int maxFragment, int queueDepth, long window, int maxRead,
        Duration shutdownGrace, Limits limits, Set<String> keysRead) {

    /**
     * Caps on what peers that have not proven anything, or one address, can make a target hold.
     *
     * @param preAuthFrame the largest frame accepted before the handshake completed
     * @param connections incoming connections this transport holds at most
     * @param connectionsPerAddress incoming connections from one IP address at most
     * @param preAuthConnections incoming connections handshaking at once at most (a new one pushes the oldest out)
     * @param queuedBytes answers a target queues for one connection before it stops reading from it
     * @param queuedBytesTotal answers a target queues for all its connections: each gets its share
     * @param unreadTimeout how long a connection may leave its answers unread before it is closed
     * @param refusalLogInterval at most one warning about refused connections per this interval
     */
    record Limits(int preAuthFrame, int connections, int connectionsPerAddress, int preAuthConnections, int queuedBytes,
            long queuedBytesTotal, Duration unreadTimeout, Duration refusalLogInterval) {
        /** The least a connection may queue, however many share {@code queued-bytes-total}. */
        static final int LEAST_QUEUED_BYTES = 64 << 10;

        /**
         * @param answering authenticated incoming connections open now
         * @return the answer bytes one of them may leave unread before its reading pauses: its even
         *     share of {@code queued-bytes-total}, at most {@code queued-bytes}, at least 64 KiB
         */
        int queueMark(int answering) {
            long share = queuedBytesTotal / Math.max(1, answering);
            return (int) Math.max(LEAST_QUEUED_BYTES, Math.min(queuedBytes, share));
        }
    }

    /**
     * How peers authenticate, and what protects the frames afterwards.
     *
     * @param tlsOn mutual TLS (else the secret's handshake alone, frames in clear)
     * @param passphrase the shared secret as configured, or empty
     * @param key a key file's random bytes, or null
     * @param tls the TLS material (read whether or not TLS is on; checked only when it is)
     */
    record Security(boolean tlsOn, String passphrase, byte[] key, Tls tls) {
        /** @return whether a secret (passphrase or key file) is configured */
        boolean hasSecret() {
            return !passphrase.isEmpty() || key != null;
        }

        /** Never shows the secret. */
        @Override
        public String toString() {
            return "Security[" + (tlsOn ? "tls" : "secret") + (hasSecret() ? ", secret set" : "") + "]";
        }
    }

    /**
     * {@code tls.*}: this worker's certificate and key, whom it trusts, and the engine.
     *
     * @param keyStore a PKCS#12 key store, or null
     * @param keyStorePassword its password
     * @param certificate a PEM certificate chain, or null
     * @param privateKey the PEM (PKCS#8) private key of {@code certificate}, or null
     * @param privateKeyPassword the private key's password, empty if it is not encrypted
     * @param trustStore a PKCS#12 trust store, or null
     * @param trustStorePassword its password
     * @param trustedCertificates a PEM file of trusted (CA) certificates, or null
     * @param protocols the TLS versions allowed
     * @param provider auto, jdk or openssl
     * @param verifyHostname whether a server's certificate must name the address connected to
     */
    record Tls(java.nio.file.Path keyStore, String keyStorePassword, java.nio.file.Path certificate,
            java.nio.file.Path privateKey, String privateKeyPassword, java.nio.file.Path trustStore,
            String trustStorePassword, java.nio.file.Path trustedCertificates, List<String> protocols, String provider,
            boolean verifyHostname) {
        /** Never shows the passwords. */
        @Override
        public String toString() {
            return "Tls[keyStore=" + keyStore + ", certificate=" + certificate + ", trustStore=" + trustStore
                    + ", trustedCertificates=" + trustedCertificates + ", protocols=" + protocols + ", provider="
                    + provider + ", verifyHostname=" + verifyHostname + "]";
        }
    }
    static final String SECTION = "fenceline.transport.tcp";
    private static final int MIN_SECRET = 16;

    /** @param section the transport's own section (what {@code TransportContext.config()} holds) */
    /** @return how a failed rail is reconnected */
    ReconnectPolicy reconnectPolicy() {
        return new ReconnectPolicy(minBackoff, maxBackoff, giveUpAfter, stableAfter);
    }

    static TcpSettings fromSection(Config section) {
        ConfigReader r = new ConfigReader(section.atPath(SECTION), SECTION);
        List<String> raw = r.stringList("listen");
        if (raw.isEmpty() || raw.size() > 16) {
            throw r.invalid("listen", raw.toString(), "1 to 16 addresses");
        }
        List<InetSocketAddress> listen = new ArrayList<>();
        for (String s : raw) {
            listen.add(parse(r, s));
        }
        int maxRails = r.intIn("max-rails", 1, 16);
        Security security = security(r);
        String io = r.oneOf("io", List.of("auto", "epoll", "nio"));
        int ioThreads = r.intIn("io-threads", 1, 64);
        boolean directWrites = r.bool("direct-writes");
        boolean directOperations = r.bool("direct-operations");
        boolean busyPoll = r.bool("busy-poll");
        int amThreads = r.intIn("active-message-threads", 0, 64);
        Duration connectTimeout = r.durationIn("connect-timeout", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration userTimeout = r.durationIn("user-timeout", Duration.ZERO, Duration.ofHours(1));
        if (!userTimeout.isZero() && userTimeout.toMillis() < 1) {
            // TCP_USER_TIMEOUT counts whole milliseconds: a sub-millisecond value would become 0, the kernel default.
            throw r.invalid("user-timeout", userTimeout.toString(), "0 (the kernel default) or at least 1ms");
        }
        Duration idle = seconds(r, "keepalive.idle");
        Duration interval = seconds(r, "keepalive.interval");
        int count = r.intIn("keepalive.count", 1, 100);
        String congestion = r.string("congestion-control");
        if (!congestion.isEmpty() && !congestion.matches("[a-z0-9_]{1,15}")) {
            // The kernel names an algorithm in at most 15 bytes (TCP_CA_NAME_MAX with its NUL).
            throw r.invalid("congestion-control", congestion, "empty (the kernel's default) or the name of a TCP"
                    + " congestion control, 1 to 15 of a-z, 0-9 and _ (see "
                    + NettyIo.AVAILABLE_CONGESTION_CONTROL + ")");
        }
        Duration minBackoff = r.durationIn("reconnect.min-backoff", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration maxBackoff = r.durationIn("reconnect.max-backoff", minBackoff, Duration.ofMinutes(10));
        Duration giveUp = r.durationIn("reconnect.give-up-after", Duration.ofSeconds(1), Duration.ofDays(7));
        Duration stable = r.durationIn("reconnect.stable-after", Duration.ofMillis(1), Duration.ofHours(1));
        int maxFragment = (int) r.bytesIn("max-fragment", 4 << 10, 64 << 20);
        int queueDepth = r.intIn("queue-depth", 1, 65536);
        long window = r.bytesIn("window", 64 << 10, 1L << 30);
        int maxRead = (int) r.bytesIn("max-read", 4 << 10, 16 << 20);
        int connections = r.intIn("limits.connections", 1, 1 << 20);
        Limits limits = new Limits((int) r.bytesIn("limits.pre-auth-frame", 128, 64 << 10), connections,
                r.intIn("limits.connections-per-address", 1, connections),
                Math.min(r.intIn("limits.pre-auth-connections", 1, 1 << 20), connections),
                (int) r.bytesIn("limits.queued-bytes", 64 << 10, 1 << 30),
                r.bytesIn("limits.queued-bytes-total", 64 << 10, 1L << 40),
                r.durationIn("limits.unread-timeout", Duration.ofMillis(100), Duration.ofHours(1)),
                r.durationIn("limits.refusal-log-interval", Duration.ofMillis(1), Duration.ofHours(1)));
        Duration shutdownGrace = r.durationIn("shutdown-grace", Duration.ZERO, Duration.ofMinutes(10));
        return new TcpSettings(List.copyOf(listen), maxRails, security, io, ioThreads, directWrites, directOperations, busyPoll, amThreads, connectTimeout, userTimeout, idle,
                interval, count, congestion, minBackoff, maxBackoff, giveUp, stable, maxFragment, queueDepth, window, maxRead,
                shutdownGrace, limits, r.keysRead());
    }

    private static Security security(ConfigReader r) {
        boolean tlsOn = r.oneOf("security", List.of("tls", "secret")).equals("tls");
        String passphrase = r.secret("secret");
        String keyFile = r.string("secret-file");
        if (!passphrase.isEmpty() && !keyFile.isEmpty()) {
            throw r.invalid("secret-file", keyFile, "either secret or secret-file, not both (secret is set too)");
        }
        if (!passphrase.isEmpty() && passphrase.length() < MIN_SECRET) {
            // Never echo the secret itself.
            throw r.invalid("secret", "<" + passphrase.length() + " characters>", "a shared secret of at least "
                    + MIN_SECRET + " characters (set it in the configuration or FENCELINE_TCP_SECRET)");
        }
        byte[] key = keyFile.isEmpty() ? null : SecretFiles.read(r, "secret-file", keyFile);
        if (!tlsOn && passphrase.isEmpty() && key == null) {
            throw r.invalid("secret", "<0 characters>", "a shared secret of at least " + MIN_SECRET + " characters"
                    + " (secret, FENCELINE_TCP_SECRET) or a key file (secret-file) when security = secret;"
                    + " or security = tls with certificates");
        }
        Tls tls = tls(r, tlsOn);
        return new Security(tlsOn, passphrase, key, tls);
    }

    private static Tls tls(ConfigReader r, boolean on) {
        java.nio.file.Path keyStore = file(r, "tls.key-store", on);
        String keyStorePassword = r.secret("tls.key-store-password");
        java.nio.file.Path certificate = file(r, "tls.certificate", on);
        java.nio.file.Path privateKey = file(r, "tls.private-key", on);
        String privateKeyPassword = r.secret("tls.private-key-password");
        java.nio.file.Path trustStore = file(r, "tls.trust-store", on);
        String trustStorePassword = r.secret("tls.trust-store-password");
        java.nio.file.Path trusted = file(r, "tls.trusted-certificates", on);
        List<String> protocols = r.stringList("tls.protocols");
        String provider = r.oneOf("tls.provider", List.of("auto", "jdk", "openssl"));
        boolean verifyHostname = r.bool("tls.verify-hostname");
        if (on) {
            if ((keyStore == null) == (certificate == null)) {
                throw r.invalid("tls.key-store", String.valueOf(keyStore), "with security = tls, either a PKCS#12 key"
                        + " store (tls.key-store) or a PEM certificate and key (tls.certificate, tls.private-key)");
            }
            if ((certificate == null) != (privateKey == null)) {
                throw r.invalid("tls.private-key", String.valueOf(privateKey), "the PEM private key of"
                        + " tls.certificate (both or neither)");
            }
            if ((trustStore == null) == (trusted == null)) {
                throw r.invalid("tls.trust-store", String.valueOf(trustStore), "with security = tls, either a PKCS#12"
                        + " trust store (tls.trust-store) or a PEM file of trusted certificates"
                        + " (tls.trusted-certificates)");
            }
            if (protocols.isEmpty() || !List.of("TLSv1.3", "TLSv1.2").containsAll(protocols)) {
                throw r.invalid("tls.protocols", protocols.toString(), "one or both of TLSv1.3, TLSv1.2");
            }
        }
        return new Tls(keyStore, keyStorePassword, certificate, privateKey, privateKeyPassword, trustStore,
                trustStorePassword, trusted, List.copyOf(protocols), provider, verifyHostname);
    }

    /** @return the readable file a key names, or null if it is empty */
    private static java.nio.file.Path file(ConfigReader r, String key, boolean mustExist) {
        String s = r.string(key);
        if (s.isEmpty()) {
            return null;
        }
        java.nio.file.Path p = java.nio.file.Path.of(s);
        if (mustExist && !java.nio.file.Files.isReadable(p)) {
            throw r.invalid(key, s, "a readable file");
        }
        return p;
    }


    private static Duration seconds(ConfigReader r, String key) {
        Duration d = r.durationIn(key, Duration.ofSeconds(1), Duration.ofHours(2));
        if (d.getNano() != 0) { // not toMillis(): a sub-millisecond fraction would pass and be truncated
            throw r.invalid(key, d.toString(), "whole seconds (TCP keepalive counts in seconds)");
        }
        return d;
    }

    private static InetSocketAddress parse(ConfigReader r, String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw r.invalid("listen", s, "host:port");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw r.invalid("listen", s, "host:port with a numeric port");
        }
        if (port < 0 || port > 65535) {
            throw r.invalid("listen", s, "a port in [0, 65535]");
        }
        InetAddress a;
        try {
            a = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw r.invalid("listen", s, "a resolvable host (" + e.getMessage() + ")");
        }
        if (a.isAnyLocalAddress()) {
            throw r.invalid("listen", s.toLowerCase(Locale.ROOT), "a concrete address, not a wildcard: list one"
                    + " address per rail");
        }
        return new InetSocketAddress(a, port);
    }
}
