package dev.fenceline.transport.tcp;

import java.util.UUID;

/**
 * The target's half of one connection's wireup, without I/O: it checks a HELLO (version, which
 * worker it asks for), makes the challenge, checks the client's proof and makes the server's. The
 * client proves first: the server's proof exists only once the client's matched. Used on the
 * channel's event loop only.
 */
final class ServerHandshake {
    /** Why a peer is refused: {@code reason} goes back to it, {@code detail} into this side's log. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final String reason;

        Refused(String reason, String detail) {
            super(detail, null, false, false);
            this.reason = reason;
        }
    }

    private final Handshake keys;
    private final UUID me;
    private UUID peer;
    private byte[] clientNonce;
    private byte[] serverNonce;

    ServerHandshake(Handshake keys, UUID me) {
        this.keys = keys;
        this.me = me;
    }

    /**
     * @return the server nonce for the CHALLENGE (which carries no proof)
     * @throws Refused for no common version, or a HELLO meant for another worker
     */
    byte[] hello(int min, int max, UUID client, UUID server, byte[] nonce) throws Refused {
        if (min > Wire.VERSION || max < Wire.VERSION) {
            throw new Refused("no common protocol version: you speak " + min + ".." + max + ", this worker "
                    + Wire.VERSION, "it speaks protocol versions " + min + ".." + max + ", this worker " + Wire.VERSION);
        }
        if (!server.equals(me)) {
            throw new Refused("no worker " + server + " here", "it asked for worker " + server);
        }
        peer = client;
        clientNonce = nonce;
        serverNonce = Handshake.nonce();
        return serverNonce;
    }

    /**
     * @param proof the client's proof from AUTH
     * @return the server's proof for WELCOME
     * @throws Refused if the proof does not match (or one side has a secret and the other not)
     */
    byte[] authenticate(byte[] proof) throws Refused {
        byte[] expected = keys.clientProof(Wire.VERSION, peer, me, clientNonce, serverNonce);
        if (!Handshake.matches(expected, proof)) {
            if (expected.length == proof.length) {
                throw new Refused("authentication failed", "claims worker " + peer
                        + ": authentication failed (wrong secret?)");
            }
            String why = proof.length == 0 ? "it proved no secret, and this worker requires one"
                    : "it sent a secret's proof, and this worker has no secret (TLS only)";
            throw new Refused(why, "claims worker " + peer + ": " + why);
        }
        return keys.serverProof(Wire.VERSION, peer, me, clientNonce, serverNonce);
    }

    /** @return the worker id the client claimed (its proof covers it) */
    UUID peer() {
        return peer;
    }
}
