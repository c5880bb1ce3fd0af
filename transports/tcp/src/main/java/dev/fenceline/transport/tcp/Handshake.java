package dev.fenceline.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response authentication with a shared secret: each side proves it knows the
 * secret with an HMAC-SHA256 over both nonces, both worker ids, the negotiated version and its own
 * role, so a proof cannot be replayed to another connection or reflected back. The secret never
 * crosses the wire.
 *
 * <p>The client proves first, and the server answers with its proof only after checking the
 * client's: whoever merely connects to a server learns nothing to test guesses of the secret
 * against. The MAC key is not the secret itself: a passphrase is stretched with PBKDF2 (so each
 * guess costs what deriving the key costs), a key file's random bytes are used through HMAC as
 * they are (they need no stretching).
 *
 * <p>Under TLS the certificates authenticate both ends; without a secret the proofs are then
 * empty, and with one both must hold.
 */
final class Handshake {
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] CLIENT_ROLE = "fenceline-tcp client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_ROLE = "fenceline-tcp server".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_PROOF = new byte[0];
    private static final SecureRandom RANDOM = new SecureRandom();
    /** PBKDF2-HMAC-SHA256 iterations for a passphrase: about 0.3 s per guess on one core. */
    static final int ITERATIONS = 600_000;
    private static final byte[] SALT = "fenceline-tcp secret, wire version 2".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] KEY_FILE_LABEL = "fenceline-tcp key file".getBytes(StandardCharsets.US_ASCII);
    /** Deriving costs a third of a second: once per passphrase and process, not once per worker. */
    private static final Map<String, SecretKeySpec> DERIVED = new ConcurrentHashMap<>();

    /** No secret: TLS alone authenticates. */
    static final Handshake TLS_ONLY = new Handshake(null);

    private final SecretKeySpec key;

    private Handshake(SecretKeySpec key) {
        this.key = key;
    }

    /** @param passphrase the cluster's shared secret (not empty) */
    static Handshake fromPassphrase(String passphrase) {
        return new Handshake(DERIVED.computeIfAbsent(passphrase, Handshake::stretch));
    }

    /** @param random a key file's bytes (random, at least 32 of them) */
    static Handshake fromKey(byte[] random) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(random, ALGORITHM));
            return new Handshake(new SecretKeySpec(mac.doFinal(KEY_FILE_LABEL), ALGORITHM));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 unavailable", e);
        }
    }

    private static SecretKeySpec stretch(String passphrase) {
        PBEKeySpec spec = new PBEKeySpec(passphrase.toCharArray(), SALT, ITERATIONS, 256);
        try {
            byte[] k = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
            return new SecretKeySpec(k, ALGORITHM);
        } catch (GeneralSecurityException e) {
            // PBKDF2WithHmacSHA256 is a mandatory JDK algorithm; reaching this means a broken JDK.
            throw new IllegalStateException("PBKDF2WithHmacSHA256 unavailable", e);
        } finally {
            spec.clearPassword();
        }
    }

    /** @return whether proofs are made and checked (false: TLS alone authenticates) */
    boolean hasSecret() {
        return key != null;
    }

    static byte[] nonce() {
        byte[] n = new byte[Wire.NONCE];
        RANDOM.nextBytes(n);
        return n;
    }

    byte[] clientProof(int version, UUID client, UUID server, byte[] clientNonce, byte[] serverNonce) {
        return proof(CLIENT_ROLE, version, client, server, clientNonce, serverNonce);
    }

    byte[] serverProof(int version, UUID client, UUID server, byte[] clientNonce, byte[] serverNonce) {
        return proof(SERVER_ROLE, version, client, server, clientNonce, serverNonce);
    }

    /**
     * Constant-time comparison, so timing tells an attacker nothing about the expected proof. Two
     * empty proofs match: that is the TLS-only mode, where both sides expect none.
     */
    static boolean matches(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }

    private byte[] proof(byte[] role, int version, UUID client, UUID server, byte[] clientNonce, byte[] serverNonce) {
        if (key == null) {
            return NO_PROOF;
        }
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(role);
            mac.update(ByteBuffer.allocate(2 + 32).putShort((short) version)
                    .putLong(client.getMostSignificantBits()).putLong(client.getLeastSignificantBits())
                    .putLong(server.getMostSignificantBits()).putLong(server.getLeastSignificantBits()).flip());
            mac.update(clientNonce);
            mac.update(serverNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            // HmacSHA256 is a mandatory JDK algorithm; reaching this means a broken JDK.
            throw new IllegalStateException("HMAC-SHA256 unavailable", e);
        }
    }
}
