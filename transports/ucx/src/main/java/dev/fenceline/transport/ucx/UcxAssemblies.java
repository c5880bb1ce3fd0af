package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The active messages a worker's target receives in parts ({@link UcxWire#PART}, then the MESSAGE
 * with the last bytes), at most one per connection, and the room they hold: bounded for the worker
 * and for each peer. Every field of a part is the sender's and checked. A message holds the room its
 * bytes so far take (its array, which grows with them), not the size its first part claims: a claim
 * costs its sender nothing, so claims held room that a peer could keep reserved, against everyone's
 * messages, with a few dozen bytes per claim, renewed by starting each message again. A message that
 * finds no room as it grows is refused (said when its end comes). A message not whole
 * {@code assembly-timeout} after its first part gives up its room to a message that needs it
 * (refused likewise): without it, peers that send part of a message and stop, or trickle the rest,
 * would hold the room until their connections close. Progress agent only.
 */
final class UcxAssemblies {
    /** Messages arriving in parts, at most one per connection (a lane sends a message's parts in a row). */
    private final Long2ObjectHashMap<Assembly> assemblies = new Long2ObjectHashMap<>();
    /** Bytes the assemblies' arrays hold, at most {@link #MAX_ASSEMBLING}. */
    private long assembling;
    /** What all connections' messages in parts may hold at once: beyond it a message is refused. */
    static final long MAX_ASSEMBLING = 64L << 20;
    /**
     * What one peer's messages in parts may hold at once (a whole message always fits): a peer
     * that opens many connections cannot take the others' room. A peer is a worker id, which its
     * CONNECT states: ids made up on one host still share {@link #MAX_ASSEMBLING}.
     */
    private final long maxAssemblingPerPeer;

    /**
     * A message arriving in parts ({@link UcxWire#PART}) on one connection: its bytes so far, or why
     * it is refused (a part was bad); its MESSAGE is answered with that.
     */
    private static final class Assembly {
        final long token;
        final long total;
        /** Whose room its bytes take. */
        final UcxPeer peer;
        /**
         * Its bytes so far, in an array that grows with them ({@link #ensure}) and ends the message's
         * size; null once refused. Its length is the room it holds.
         */
        byte[] bytes;
        int filled;
        FencelineException refused;
        /** When its first part came (nanoTime). */
        long started;

        Assembly(long token, long total, UcxPeer peer, FencelineException refused) {
            this.token = token;
            this.total = total;
            this.peer = peer;
            this.refused = refused;
            this.bytes = refused == null ? NO_BYTES : null;
        }
    }

    private static final byte[] NO_BYTES = new byte[0];
    /**
     * An assembly's array takes the message's whole size once its bytes so far pass this fraction of
     * it, and grows by doubling before: the worker allocates at most this many times what a peer has
     * sent of a message, and what it copies as the array grows adds up to less than a quarter of the
     * message (nothing where the first part brings a sixteenth of it). A peer that holds room
     * therefore has sent at least a sixteenth of it.
     */
    private static final int WHOLE_FROM_FRACTION = 16;

    private final String workerName;
    /** The largest message assembled from parts (fenceline.transport.ucx.max-fragment). */
    private final int maxMessage;
    /** Told of a part dropped because the sender broke the order of its messages. */
    private final Consumer<String> dropped;
    private final LongSupplier clock;
    /** How long after its first part a message may keep its room when another needs it. */
    private final long timeoutNanos;
    /** When the assemblies were last looked over for late ones: at most every quarter timeout. */
    private long lastSweep;

    /**
     * @param workerName for messages
     * @param maxMessage the largest message assembled from parts
     * @param timeoutNanos how long after its first part a message may keep its room when another
     *     message needs it ({@code assembly-timeout})
     * @param clock nanoTime
     * @param dropped told of what was dropped (the target logs it)
     */
    UcxAssemblies(String workerName, int maxMessage, long timeoutNanos, LongSupplier clock, Consumer<String> dropped) {
        this.workerName = workerName;
        this.maxMessage = maxMessage;
        this.maxAssemblingPerPeer = Math.max(maxMessage, MAX_ASSEMBLING / 8);
        this.timeoutNanos = timeoutNanos;
        this.clock = clock;
        this.lastSweep = clock.getAsLong() - timeoutNanos;
        this.dropped = dropped;
    }

    /** @return bytes held by messages arriving in parts */
    long held() {
        return assembling;
    }

    /**
     * @param conn a connection
     * @return the bytes allocated for its message in parts (for tests)
     */
    int allocated(long conn) {
        Assembly a = assemblies.get(conn);
        return a == null || a.bytes == null ? 0 : a.bytes.length;
    }

    /** @return whether a message is arriving in parts on the connection */
    boolean has(long conn) {
        return assemblies.containsKey(conn);
    }

    /** Drops the connection's message in parts, if any, and what it holds (the connection ended). */
    void drop(long conn) {
        unassemble(conn);
    }

    /**
     * A part of a message: kept in the connection's assembly, or the assembly refused (answered when
     * its MESSAGE comes). Every field is the sender's and checked: the message's size against this
     * worker's bound, the peer's share and all assemblies' room, each part's place against the bytes
     * so far.
     */
    void part(long conn, UcxPeer peer, long token, DirectBuffer data, int at, int length) {
        long total = data.getInt(at + UcxWire.LENGTH) & 0xffff_ffffL;
        long offset = data.getLong(at + UcxWire.ADDRESS);
        int n = length - UcxWire.REQUEST_HEADER;
        Assembly a = assemblies.get(conn);
        if (a != null && a.token != token) { // the message before never finished: the sender broke its order
            dropped.accept("the parts of a message on connection " + Long.toHexString(conn) + ", followed by another's");
            unassemble(conn);
            a = null;
        }
        if (a == null) {
            FencelineException refused = null;
            if (offset != 0) {
                refused = new FencelineException("ucx: the first part of an active message came at byte " + offset
                        + "; not applied");
            } else if (total > maxMessage) {
                refused = new FencelineException("ucx worker '" + workerName + "': an active message of " + total
                        + " bytes exceeds this worker's limit of " + maxMessage + " (fenceline.transport.ucx"
                        + ".max-fragment); not applied");
            }
            a = new Assembly(token, total, peer, refused); // its room taken as its bytes come
            a.started = clock.getAsLong();
            assemblies.put(conn, a);
        }
        if (a.refused != null) {
            return;
        }
        if (offset != a.filled || n <= 0 || a.filled + (long) n >= a.total) { // the MESSAGE brings the last bytes
            refuse(a, new FencelineException("ucx: a part of " + n + " bytes at byte " + offset + " of an active"
                    + " message of " + a.total + " with " + a.filled + " so far; not applied"));
            return;
        }
        if (!ensure(a, a.filled + (long) n)) {
            return;
        }
        data.getBytes(at + UcxWire.REQUEST_HEADER, a.bytes, a.filled, n);
        a.filled += n;
    }

    /**
     * Room in the assembly's array for its first {@code need} bytes. Allocating the whole message at
     * its first part would let a peer that sends first parts of a few bytes, each claiming a large
     * message and abandoned for the next, make this worker allocate and clear megabytes for every
     * few dozen bytes it sends.
     */
    private boolean ensure(Assembly a, long need) {
        if (need <= a.bytes.length) {
            return true;
        }
        long size = need * WHOLE_FROM_FRACTION > a.total ? a.total : Math.max(need, 2L * a.bytes.length);
        long more = size - a.bytes.length;
        if (a.peer.assembling + more > maxAssemblingPerPeer || assembling + more > MAX_ASSEMBLING) {
            expireLate(clock.getAsLong()); // room held by messages that did not come whole in time goes to this one
            if (a.refused != null) {
                return false; // late itself
            }
        }
        if (a.peer.assembling + more > maxAssemblingPerPeer) {
            refuse(a, noRoom(a, more, a.peer.assembling + " bytes of active messages from worker " + a.peer.id
                    + " are held for their parts (this one's " + a.bytes.length + " among them): " + more
                    + " more would pass one peer's bound of " + maxAssemblingPerPeer));
            return false;
        }
        if (assembling + more > MAX_ASSEMBLING) {
            refuse(a, noRoom(a, more, assembling + " bytes of active messages are held for their parts (this one's "
                    + a.bytes.length + " among them): " + more + " more would pass the bound of " + MAX_ASSEMBLING));
            return false;
        }
        assembling += more;
        a.peer.assembling += more;
        a.bytes = java.util.Arrays.copyOf(a.bytes, (int) size);
        return true;
    }

    private FencelineException noRoom(Assembly a, long more, String held) {
        return new FencelineException("ucx worker '" + workerName + "': an active message of " + a.total + " bytes, "
                + a.filled + " of them kept so far, needed " + more + " more bytes of room for its parts; " + held
                + "; not applied");
    }

    /**
     * The MESSAGE that ends a message sent in parts: its last bytes added to the assembly.
     *
     * @return the message's bytes, header and payload
     * @throws FencelineException why it is not applied (a part was bad or missing, the sizes disagree)
     */
    byte[] assembled(long conn, long token, DirectBuffer data, int at, int length) {
        long offset = data.getLong(at + UcxWire.ADDRESS);
        int n = length - UcxWire.REQUEST_HEADER;
        Assembly a = assemblies.get(conn);
        unassemble(conn);
        if (offset == 0) { // parts whose message never ended, then a whole message: the sender broke its order
            dropped.accept("the parts of a message on connection " + Long.toHexString(conn) + ", followed by another's");
            return null;
        }
        if (a == null || a.token != token) {
            throw new FencelineException("ucx: the end of an active message at byte " + offset + " whose parts never"
                    + " came; not applied");
        }
        if (a.refused != null) {
            throw a.refused;
        }
        if (offset != a.filled || offset + n != a.total) {
            throw new FencelineException("ucx: the end of an active message of " + a.total + " bytes, " + n
                    + " at byte " + offset + " with " + a.filled + " so far; not applied");
        }
        // Given back already (unassembled above): the whole message goes to its handler now.
        byte[] whole = a.bytes.length == a.total ? a.bytes : java.util.Arrays.copyOf(a.bytes, (int) a.total);
        data.getBytes(at + UcxWire.REQUEST_HEADER, whole, a.filled, n);
        return whole;
    }

    /**
     * Refuses the messages whose first part is older than the timeout, and gives their room back; at
     * most once a quarter timeout, so that a stream of messages refused for room does not make
     * every one of them look over all the assemblies.
     */
    private void expireLate(long now) {
        if (now - lastSweep < timeoutNanos / 4) {
            return;
        }
        lastSweep = now;
        assemblies.forEachLong((conn, a) -> {
            if (a.refused == null && now - a.started > timeoutNanos) {
                refuse(a, new FencelineException("ucx worker '" + workerName + "': an active message of " + a.total
                        + " bytes on connection " + Long.toHexString(conn) + " was not whole "
                        + (now - a.started) / 1_000_000 + " ms after its first part (" + UcxSettings.SECTION
                        + ".assembly-timeout = " + timeoutNanos / 1_000_000 + " ms) when messages in parts"
                        + " needed room; not applied"));
            }
        });
    }

    private void refuse(Assembly a, FencelineException why) {
        if (a.refused == null) { // its array holds room
            assembling -= a.bytes.length;
            a.peer.assembling -= a.bytes.length;
            a.bytes = null;
        }
        a.refused = why;
    }

    /** Drops the connection's message in parts, if any, and what it holds. */
    private void unassemble(long conn) {
        Assembly a = assemblies.remove(conn);
        if (a != null && a.refused == null) {
            assembling -= a.bytes.length;
            a.peer.assembling -= a.bytes.length;
        }
    }
}
