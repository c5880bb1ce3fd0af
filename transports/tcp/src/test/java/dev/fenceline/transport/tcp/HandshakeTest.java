package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Handshake proofs bind the role, both nonces, both worker ids, the version and the secret; matches() is exact. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HandshakeTest {
    private static final String SECRET = "handshake-test-secret-0123";
    private static final UUID CLIENT = new UUID(1, 2);
    private static final UUID SERVER = new UUID(3, 4);
    private static final byte[] CN = filled(0x11);
    private static final byte[] SN = filled(0x22);

    private static byte[] filled(int b) {
        byte[] n = new byte[Wire.NONCE];
        Arrays.fill(n, (byte) b);
        return n;
    }

    private static byte[] flipped(byte[] b, int bit) {
        byte[] c = b.clone();
        c[bit / 8] ^= (byte) (1 << (bit % 8));
        return c;
    }

    private static String key(byte[] proof) {
        return Recorder.hex(proof);
    }

    @Test
    void proofsAreDeterministicPerSecret() {
        byte[] p = Handshake.fromPassphrase(SECRET).clientProof(1, CLIENT, SERVER, CN, SN);
        assertEquals(32, p.length);
        assertArrayEquals(p, Handshake.fromPassphrase(SECRET).clientProof(1, CLIENT, SERVER, CN.clone(), SN.clone()));
    }

    @Test
    void everyInputChangesTheProof() {
        Handshake h = Handshake.fromPassphrase(SECRET);
        List<byte[]> proofs = List.of(
                h.clientProof(1, CLIENT, SERVER, CN, SN),
                h.serverProof(1, CLIENT, SERVER, CN, SN), // role
                h.clientProof(2, CLIENT, SERVER, CN, SN), // version
                h.clientProof(1, new UUID(1, 3), SERVER, CN, SN), // client id
                h.clientProof(1, CLIENT, new UUID(3, 5), CN, SN), // server id
                h.clientProof(1, SERVER, CLIENT, CN, SN), // ids swapped
                h.clientProof(1, CLIENT, SERVER, flipped(CN, 255), SN), // client nonce, last bit
                h.clientProof(1, CLIENT, SERVER, CN, flipped(SN, 0)), // server nonce, first bit
                h.clientProof(1, CLIENT, SERVER, SN, CN), // nonces swapped
                Handshake.fromPassphrase(SECRET + "!").clientProof(1, CLIENT, SERVER, CN, SN), // secret
                Handshake.fromPassphrase("Handshake-test-secret-0123").clientProof(1, CLIENT, SERVER, CN, SN)); // secret, 1 bit
        Set<String> distinct = new HashSet<>();
        for (byte[] p : proofs) {
            distinct.add(key(p));
        }
        assertEquals(proofs.size(), distinct.size(), "every variation gives its own proof");
    }

    @Test
    void matchesIsExact() {
        byte[] p = Handshake.fromPassphrase(SECRET).serverProof(1, CLIENT, SERVER, CN, SN);
        assertTrue(Handshake.matches(p, p.clone()));
        for (int bit = 0; bit < p.length * 8; bit++) {
            assertFalse(Handshake.matches(p, flipped(p, bit)), "bit " + bit);
        }
        assertFalse(Handshake.matches(p, Arrays.copyOf(p, p.length - 1)), "a prefix");
        assertFalse(Handshake.matches(p, Arrays.copyOf(p, p.length + 1)), "an extension");
        assertFalse(Handshake.matches(p, new byte[0]));
    }

    /** A key file's bytes key the proofs directly; a passphrase of the same bytes gives other proofs. */
    @Test
    void aKeyFileAndAPassphraseKeyDifferently() {
        byte[] random = new byte[32];
        Arrays.fill(random, (byte) 'k');
        byte[] fromFile = Handshake.fromKey(random).clientProof(2, CLIENT, SERVER, CN, SN);
        assertEquals(32, fromFile.length);
        assertArrayEquals(fromFile, Handshake.fromKey(random.clone()).clientProof(2, CLIENT, SERVER, CN, SN));
        assertFalse(Arrays.equals(fromFile, Handshake.fromPassphrase(new String(random,
                java.nio.charset.StandardCharsets.US_ASCII)).clientProof(2, CLIENT, SERVER, CN, SN)));
        assertFalse(Arrays.equals(fromFile, Handshake.fromKey(flipped(random, 77)).clientProof(2, CLIENT, SERVER, CN,
                SN)));
    }

    /**
     * The passphrase is stretched (PBKDF2, 600,000 rounds), not used raw: the proof differs from an
     * HMAC keyed with the passphrase's bytes, so a recorded proof cannot be checked against guesses
     * at the cost of one HMAC each.
     */
    @Test
    void aPassphraseIsStretchedNotUsedRaw() throws Exception {
        javax.crypto.Mac raw = javax.crypto.Mac.getInstance("HmacSHA256");
        raw.init(new javax.crypto.spec.SecretKeySpec(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                "HmacSHA256"));
        raw.update("fenceline-tcp client".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        raw.update(java.nio.ByteBuffer.allocate(34).putShort((short) 2).putLong(1).putLong(2).putLong(3).putLong(4)
                .flip());
        raw.update(CN);
        raw.update(SN);
        byte[] unstretched = raw.doFinal();
        byte[] proof = Handshake.fromPassphrase(SECRET).clientProof(2, CLIENT, SERVER, CN, SN);
        assertFalse(Arrays.equals(unstretched, proof), "the proof must not be keyed by the raw passphrase");
        assertEquals(600_000, Handshake.ITERATIONS);
    }

    /** Without a secret (TLS alone authenticates) proofs are empty, and only an empty proof matches one. */
    @Test
    void tlsOnlyMakesEmptyProofs() {
        byte[] none = Handshake.TLS_ONLY.clientProof(2, CLIENT, SERVER, CN, SN);
        assertEquals(0, none.length);
        assertFalse(Handshake.TLS_ONLY.hasSecret());
        assertTrue(Handshake.matches(none, new byte[0]));
        assertFalse(Handshake.matches(none, Handshake.fromPassphrase(SECRET).clientProof(2, CLIENT, SERVER, CN, SN)));
    }

    @Test
    void noncesAreFreshAndFullLength() {
        byte[] a = Handshake.nonce();
        byte[] b = Handshake.nonce();
        assertEquals(Wire.NONCE, a.length);
        assertFalse(Arrays.equals(a, b));
    }
}
