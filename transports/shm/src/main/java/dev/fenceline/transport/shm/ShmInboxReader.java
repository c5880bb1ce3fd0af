package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.WireCodes;
import java.util.Set;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.MessageHandler;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The polling thread's reader of this worker's inbox: every record a peer wrote there is hostile
 * until checked. Wireup answers go to the transport actor (once per connect), requests to the
 * target side, replies to the origin lane they name, after their lengths are checked; a malformed
 * message is dropped and counted, and logged the first time and then at every power of two.
 */
final class ShmInboxReader implements MessageHandler {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ShmInboxReader.class);

    /** Malformed messages dropped (the target side's too). */
    private final Drops drops;
    /** The origin lane of a connection id, or null. */
    private final LongFunction<ShmLane> lanes;
    /** Connections whose CONNECT is out: their CONNECTED goes to the transport actor, any other is dropped. */
    private final Set<Long> dialing;
    /** The transport actor, once started (else null). */
    private final Supplier<ActorRef<ShmTransportActor.Command>> actor;
    private final ShmTarget target;

    /**
     * @param lanes the origin lane of a connection id, or null
     * @param dialing the connections whose CONNECT is out (a concurrent set, shared with the transport)
     * @param actor the transport actor, or null before it started
     * @param target the target side, which applies and answers requests
     * @param drops where malformed messages are counted
     */
    ShmInboxReader(LongFunction<ShmLane> lanes, Set<Long> dialing, Supplier<ActorRef<ShmTransportActor.Command>> actor,
            ShmTarget target, Drops drops) {
        this.drops = drops;
        this.lanes = lanes;
        this.dialing = dialing;
        this.actor = actor;
        this.target = target;
    }

    /** Malformed messages dropped, counted on the polling thread; logged sparingly. */
    static final class Drops {
        private final String workerName;
        private long count;

        /** @param workerName the worker's name, for the log */
        Drops(String workerName) {
            this.workerName = workerName;
        }

        /**
         * A malformed message was dropped: logged the first time and then at every power of two, not
         * per message.
         *
         * @param what what it was
         */
        void dropped(String what) {
            long n = ++count;
            if (Long.bitCount(n) == 1) {
                LOG.warn("shm {}: dropped {} ({} malformed message(s) dropped so far)", workerName, what, n);
            }
        }
    }

    /** A message from the inbox (polling thread): its type and lengths are checked before use. */
    @Override
    public void onMessage(int type, MutableDirectBuffer buffer, int at, int length) {
        AtomicBuffer b = (AtomicBuffer) buffer;
        if (length < 8) {
            drops.dropped("a message of type " + type + " and " + length + " bytes");
            return;
        }
        long conn = b.getLong(at + ShmWire.CONN);
        switch (type) {
            case ShmWire.CONNECT -> target.onConnect(b, at, length);
            case ShmWire.CONNECTED -> {
                ActorRef<ShmTransportActor.Command> a = actor.get();
                if (a != null && dialing.remove(conn)) { // once: a peer repeating it does not fill the mailbox
                    a.tell(new ShmTransportActor.Connected(conn, length >= 12 ? b.getInt(at + 8) : -1));
                }
            }
            case ShmWire.BYE -> target.onBye(conn);
            case ShmWire.RESET -> onReset(b, at, length, conn);
            case ShmWire.ACK, ShmWire.FLUSHED, ShmWire.GET_DATA, ShmWire.NACK -> onReply(type, b, at, length, conn);
            default -> target.onRequest(type, b, at, length, conn);
        }
    }

    /**
     * The target dropped one of this worker's connections, with every answer it owed (it says why):
     * the lane fails, and what the target took counts as unanswered.
     */
    private void onReset(AtomicBuffer b, int at, int length, long conn) {
        ShmLane l = lanes.apply(conn);
        if (l == null) {
            return;
        }
        String why = length < 10 ? "" : b.getStringWithoutLengthUtf8(at + 10,
                Math.min(Short.toUnsignedInt(b.getShort(at + 8)), length - 10));
        l.reset(new EndpointFailedException("shm: " + l.peer.name + " reset the connection: " + why));
    }

    /** An answer to one of this worker's lanes; its lengths are checked before use. */
    private void onReply(int type, AtomicBuffer b, int at, int length, long conn) {
        ShmLane l = lanes.apply(conn);
        if (l == null) {
            return;
        }
        int least = switch (type) {
            case ShmWire.ACK -> 24;
            case ShmWire.NACK -> 20;
            default -> 16;
        };
        if (length < least) {
            l.fail(new FencelineException("shm: " + l.peer.name + " sent a " + ShmWire.name(type) + " of " + length
                    + " bytes, less than the " + least + " it needs"));
            return;
        }
        long token = b.getLong(at + ShmWire.TOKEN);
        switch (type) {
            case ShmWire.ACK -> l.answered(type, token, b.getLong(at + ShmWire.REPLY_VALUE), null, null, 0, 0);
            case ShmWire.FLUSHED -> l.answered(type, token, 0, null, null, 0, 0);
            case ShmWire.GET_DATA -> l.answered(type, token, 0, null, b, at + 16, length - 16);
            default -> {
                int n = Short.toUnsignedInt(b.getShort(at + 18));
                String message = b.getStringWithoutLengthUtf8(at + 20, Math.min(n, length - 20));
                l.answered(type, token, 0, WireCodes.rebuild(b.getByte(at + 16), b.getByte(at + 17), message), null,
                        0, 0);
            }
        }
    }
}
