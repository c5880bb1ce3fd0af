package dev.fenceline.transport.ucx;

/**
 * A peer's connection to this worker, as its target serves it.
 *
 * @param peer the peer worker
 * @param reply where its answers go
 * @param maxGet the largest get whose reply that channel carries in one active message
 */
record UcxIncoming(UcxPeer peer, UcxChannel reply, int maxGet) {
    /**
     * @param peer the origin's worker
     * @param reply the channel its replies go on
     */
    UcxIncoming(UcxPeer peer, UcxChannel reply) {
        this(peer, reply, Math.max(0, reply.amMax - UcxWire.REPLY_HEADER));
    }
}
