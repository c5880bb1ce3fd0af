package dev.fenceline.spi.support;

import dev.fenceline.spi.LaneCapabilities;
import dev.fenceline.spi.Protocol;
import dev.fenceline.spi.TransportOp;

/**
 * Protocol selection, a pure function of an operation and its lane's capabilities (as UCP selects
 * from iface attributes): the cheapest protocol whose limit the payload fits.
 */
public final class Protocols {
    private Protocols() {
    }

    /**
     * @param op the operation (a fragment: its payload fits the lane)
     * @param c the lane's capabilities
     * @param localRegistered whether the operation's local buffer is registered with the lane's
     *     transport (matters only where zero-copy needs it)
     * @return the protocol
     * @throws IllegalArgumentException if the payload fits no protocol of the lane
     */
    public static Protocol choose(TransportOp op, LaneCapabilities c, boolean localRegistered) {
        return switch (op.kind()) {
            case AM -> Protocol.ACTIVE_MESSAGE;
            case ATOMIC_POST, ATOMIC_FETCH -> c.hardwareAtomic(op.atomicOp(), op.width()) ? Protocol.HARDWARE_ATOMIC
                    : Protocol.SOFTWARE_ATOMIC;
            case CSWAP -> c.hardwareAtomic(null, op.width()) ? Protocol.HARDWARE_ATOMIC : Protocol.SOFTWARE_ATOMIC;
            case PUT, GET -> rma(op.local().remaining(), c, localRegistered);
        };
    }

    /**
     * @param bytes an RMA payload
     * @param c the lane's capabilities
     * @param localRegistered whether the local buffer is registered with the lane's transport
     * @return the cheapest protocol it fits: inline up to the short limit, copied up to the copy
     *     limit (cheaper than zero-copy's setup for small payloads), else zero-copy where the local
     *     buffer qualifies
     * @throws IllegalArgumentException if the payload fits no protocol of the lane
     */
    public static Protocol rma(int bytes, LaneCapabilities c, boolean localRegistered) {
        if (bytes <= c.maxShort()) {
            return Protocol.SHORT;
        }
        if (bytes <= c.maxBcopy()) {
            return Protocol.BCOPY;
        }
        if (bytes <= c.maxZcopy() && zcopyAllowed(c, localRegistered)) {
            return Protocol.ZCOPY;
        }
        throw new IllegalArgumentException(bytes + " bytes fit no protocol of the lane (short " + c.maxShort()
                + ", bcopy " + c.maxBcopy() + ", zcopy " + c.maxZcopy()
                + (c.zcopyNeedsRegisteredLocal() && !localRegistered ? " with a registered local buffer only" : "")
                + ")");
    }

    /**
     * @param c a lane's capabilities
     * @param localRegistered whether the local buffer is registered with the lane's transport
     * @return the largest RMA payload one operation from that buffer may carry on the lane: what
     *     the endpoint splits a put or get into
     */
    public static int maxPayload(LaneCapabilities c, boolean localRegistered) {
        int copy = Math.max(c.maxShort(), c.maxBcopy());
        return zcopyAllowed(c, localRegistered) ? Math.max(copy, c.maxZcopy()) : copy;
    }

    private static boolean zcopyAllowed(LaneCapabilities c, boolean localRegistered) {
        return c.maxZcopy() > 0 && (localRegistered || !c.zcopyNeedsRegisteredLocal());
    }
}
