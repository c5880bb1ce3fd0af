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
        byte[] p = new Handshake(SECRET).clientProof(1, CLIENT, SERVER, CN, SN);
        assertEquals(32, p.length);
        assertArrayEquals(p, new Handshake(SECRET).clientProof(1, CLIENT, SERVER, CN.clone(), SN.clone()));
    }

    @Test
    void everyInputChangesTheProof() {
        Handshake h = new Handshake(SECRET);
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
                new Handshake(SECRET + "!").clientProof(1, CLIENT, SERVER, CN, SN), // secret
                new Handshake("Handshake-test-secret-0123").clientProof(1, CLIENT, SERVER, CN, SN)); // secret, 1 bit
        Set<String> distinct = new HashSet<>();
        for (byte[] p : proofs) {
            distinct.add(key(p));
        }
        assertEquals(proofs.size(), distinct.size(), "every variation gives its own proof");
    }

    @Test
    void matchesIsExact() {
        byte[] p = new Handshake(SECRET).serverProof(1, CLIENT, SERVER, CN, SN);
        assertTrue(Handshake.matches(p, p.clone()));
        for (int bit = 0; bit < p.length * 8; bit++) {
            assertFalse(Handshake.matches(p, flipped(p, bit)), "bit " + bit);
        }
        assertFalse(Handshake.matches(p, Arrays.copyOf(p, p.length - 1)), "a prefix");
        assertFalse(Handshake.matches(p, Arrays.copyOf(p, p.length + 1)), "an extension");
        assertFalse(Handshake.matches(p, new byte[0]));
    }

    @Test
    void noncesAreFreshAndFullLength() {
        byte[] a = Handshake.nonce();
        byte[] b = Handshake.nonce();
        assertEquals(Wire.NONCE, a.length);
        assertFalse(Arrays.equals(a, b));
    }
}
