package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The target's half of wireup, without I/O: what it refuses, and that it proves itself only after the client did. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerHandshakeTest {
    private static final UUID ME = new UUID(1, 1);
    private static final UUID CLIENT = new UUID(2, 2);
    private static final byte[] NONCE = Handshake.nonce();
    private final Handshake keys = Handshake.fromPassphrase("server-handshake-test-secret");

    @Test
    void theClientProvesFirstThenTheServer() throws Exception {
        ServerHandshake s = new ServerHandshake(keys, ME);
        byte[] serverNonce = s.hello(Wire.VERSION, Wire.VERSION, CLIENT, ME, NONCE);
        assertEquals(Wire.NONCE, serverNonce.length);
        byte[] serverProof = s.authenticate(keys.clientProof(Wire.VERSION, CLIENT, ME, NONCE, serverNonce));
        assertArrayEquals(keys.serverProof(Wire.VERSION, CLIENT, ME, NONCE, serverNonce), serverProof);
        assertEquals(CLIENT, s.peer());
    }

    @Test
    void whatItRefuses() throws Exception {
        ServerHandshake.Refused version = assertThrows(ServerHandshake.Refused.class,
                () -> new ServerHandshake(keys, ME).hello(1, 1, CLIENT, ME, NONCE));
        assertTrue(version.reason.contains("no common protocol version"), version.reason);
        ServerHandshake.Refused other = assertThrows(ServerHandshake.Refused.class,
                () -> new ServerHandshake(keys, ME).hello(Wire.VERSION, Wire.VERSION, CLIENT, CLIENT, NONCE));
        assertEquals("no worker " + CLIENT + " here", other.reason);

        ServerHandshake s = new ServerHandshake(keys, ME);
        byte[] serverNonce = s.hello(Wire.VERSION, Wire.VERSION, CLIENT, ME, NONCE);
        byte[] wrong = Handshake.fromPassphrase("another-secret-of-enough-length").clientProof(Wire.VERSION, CLIENT,
                ME, NONCE, serverNonce);
        ServerHandshake.Refused bad = assertThrows(ServerHandshake.Refused.class, () -> s.authenticate(wrong));
        assertEquals("authentication failed", bad.reason, "the peer learns nothing more");
        assertTrue(bad.getMessage().contains("wrong secret"), bad.getMessage());
        ServerHandshake.Refused none = assertThrows(ServerHandshake.Refused.class, () -> s.authenticate(new byte[0]));
        assertTrue(none.reason.contains("requires one"), none.reason);

        ServerHandshake tlsOnly = new ServerHandshake(Handshake.TLS_ONLY, ME);
        byte[] n = tlsOnly.hello(Wire.VERSION, Wire.VERSION, CLIENT, ME, NONCE);
        ServerHandshake.Refused extra = assertThrows(ServerHandshake.Refused.class,
                () -> tlsOnly.authenticate(keys.clientProof(Wire.VERSION, CLIENT, ME, NONCE, n)));
        assertTrue(extra.reason.contains("no secret (TLS only)"), extra.reason);
        assertEquals(0, tlsOnly.authenticate(new byte[0]).length, "TLS only: no proof either way");
    }
}
