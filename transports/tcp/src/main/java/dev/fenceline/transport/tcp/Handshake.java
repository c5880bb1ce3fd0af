package dev.fenceline.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response authentication with a shared secret: each side proves it knows the
 * secret with an HMAC-SHA256 over both nonces, both worker ids, the negotiated version and its own
 * role, so a proof cannot be replayed to another connection or reflected back. The secret never
 * crosses the wire.
 */
final class Handshake {
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] CLIENT_ROLE = "fenceline-tcp client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_ROLE = "fenceline-tcp server".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;

    /** @param secret the cluster's shared secret (not empty) */
    Handshake(String secret) {
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM);
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

    /** Constant-time comparison, so timing tells an attacker nothing about the expected proof. */
    static boolean matches(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }

    private byte[] proof(byte[] role, int version, UUID client, UUID server, byte[] clientNonce, byte[] serverNonce) {
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
