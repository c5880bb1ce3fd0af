package dev.fenceline.transport.sim;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;

/** What a sim lane checks and keeps of an operation when it is posted. */
final class SimPosts {
    private SimPosts() {
    }

    /**
     * Refuses, as the other transports' lanes do, what can never go: data over the lane's largest
     * fragment, or a message whose header and payload together are (the sim sends a message whole).
     *
     * @param op an operation posted
     * @param maxFragment the lane's largest fragment
     * @throws FencelineException naming the limit
     */
    static void checkSize(TransportOp op, int maxFragment) {
        long payload = switch (op.kind()) {
            case PUT, GET -> op.local().remaining();
            case AM -> (long) op.header().remaining() + op.local().remaining();
            default -> 0;
        };
        if (payload > maxFragment) {
            throw new FencelineException("sim: " + op.kind() + " of " + payload + " bytes exceeds the lane's limit of "
                    + maxFragment + " (fenceline.transport.sim.max-fragment)");
        }
    }

    /**
     * What the target will be given: a put's or a message's bytes as they are now, as a socket's
     * frame or a ring record holds them. Once the endpoint gives an operation back (failed, its
     * outcome unknown), the caller may reuse its buffers; a copy that lands late must carry what
     * was sent, not what the buffer holds then.
     *
     * @param op an operation posted
     * @return what the lane delivers: {@code op}, or a copy with bytes of its own
     */
    static TransportOp sent(TransportOp op) {
        TransportOp copy = switch (op.kind()) {
            case PUT -> TransportOp.rma(TransportOp.Kind.PUT, op.token(), op.remoteAddress(), op.key(),
                    bytesOf(op.local()));
            case AM -> TransportOp.activeMessage(op.token(), op.amId(), bytesOf(op.header()), bytesOf(op.local()));
            default -> null; // a get writes into the caller's buffer; an atomic carries no buffer
        };
        if (copy == null) {
            return op;
        }
        return copy.identify(op.originId(), op.sequence(), op.lowWater()).trace(op.trace()).protocol(op.protocol())
                .mayHaveApplied(op.mayHaveApplied()).localHandle(op.localHandle());
    }

    private static ByteBuffer bytesOf(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining()).order(b.order());
        c.put(b.duplicate()).flip();
        return c;
    }
}
