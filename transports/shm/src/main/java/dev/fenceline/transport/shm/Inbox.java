package dev.fenceline.transport.shm;

import dev.fenceline.spi.support.Heartbeat;
import dev.fenceline.spi.support.Host;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.UUID;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * A worker's control segment: a small header naming its process; the key table of its registered
 * (not shared) regions, which peers check before reaching such memory by cross-memory attach; the
 * gates of its ring connections ({@link Gates}), which the peers it connects to check before they
 * apply a record; and its inbox, an Agrona many-to-one ring buffer in the mapped memory that every
 * peer process writes into (the ring's claim is an atomic on the shared mapping, so producers in
 * different processes are safe). Everything in a peer's segment is checked before use.
 *
 * <pre>
 * 0 magic u32 "FLCT" ("FLCX" once its worker closed, "FLCB" once its inbox broke)  4 version u32  8 pid u64  16 start u64  24 worker id 16  40 key slots u32
 * 44 gate slots u32  48 heartbeat u64 (counts up while the process runs: see spi.support.Heartbeat)
 * 56 doorbell u32  60 polling thread asleep u32 (see Doorbell)
 * 64 key table: key slots x (key id u64, state u32, access u32, base u64, length u64)
 * 64 + 32 * key slots: gate table: gate slots x (conn u64, word u64)
 * then, from the next multiple of 64 ({@link #ringOffset}): ring
 * </pre>
 */
final class Inbox implements Heartbeat.Beating {
    static final int HEADER = 64;
    static final int SLOT = 32;
    static final int FREE = 0;
    static final int OPEN = 1;
    static final int CLOSED = 2;
    private static final int MAGIC = 0x464C4354;
    /** The magic of a segment whose worker closed: its peers let it go, and their lanes to it fail. */
    private static final int CLOSED_MAGIC = 0x464C4358;
    /** The magic of a segment whose inbox was written outside the ring's protocol: its worker reads it no more. */
    private static final int BROKEN_MAGIC = 0x464C4342;
    private static final int VERSION = 4;

    final String name;
    final long pid;
    final long start;
    final UUID worker;
    final ManyToOneRingBuffer ring;
    /** The key table (see the class comment). */
    final UnsafeBuffer keys;
    /** The gates of this worker's ring connections (see the class comment). */
    final Gates gates;
    /** Rung after committing a record in this inbox: its polling thread may be asleep. */
    final Doorbell doorbell;
    private final UnsafeBuffer header;
    private static final int HEARTBEAT = 48;
    /** Replies that did not fit yet (the peer is slow): sent in order before any newer one. */
    final ArrayDeque<byte[]> backlog = new ArrayDeque<>();
    /** Bytes in {@link #backlog}. */
    long backlogBytes;
    /** Target side (polling thread only): connections this peer process holds at the worker that opened it. */
    int incoming;
    /** Target side (polling thread only): RESETs in {@link #backlog}, waiting for room in this inbox. */
    int resetsOwed;
    final ArrayDeque<Integer> backlogTypes = new ArrayDeque<>();

    /** The whole segment's mapping. */
    private final MappedByteBuffer mapping;
    /**
     * A peer's segment that was kept ({@link ShmPeerSegments#adopt}): others may read it, so it is
     * never unmapped by hand. Set before it is published.
     */
    volatile boolean everKept;

    private Inbox(String name, long pid, long start, UUID worker, UnsafeBuffer header, UnsafeBuffer keys, Gates gates,
            ManyToOneRingBuffer ring, MappedByteBuffer mapping) {
        this.mapping = mapping;
        this.header = header;
        this.doorbell = new Doorbell(header);
        this.keys = keys;
        this.gates = gates;
        this.name = name;
        this.pid = pid;
        this.start = start;
        this.worker = worker;
        this.ring = ring;
    }

    /** Creates this worker's own control segment. */
    static Inbox create(Path file, int ringSize, int slots, int gateSlots, UUID worker, boolean sealed)
            throws IOException {
        int table = slots * SLOT;
        int gateTable = gateSlots * Gates.SLOT;
        int ringAt = (int) ringOffset(table, gateTable);
        MappedByteBuffer m = Segments.create(file, ringAt + ringSize + RingBufferDescriptor.TRAILER_LENGTH, sealed);
        UnsafeBuffer header = new UnsafeBuffer(m, 0, HEADER);
        header.putInt(40, slots);
        header.putInt(44, gateSlots);
        header.putInt(4, VERSION);
        header.putLong(8, Host.pid());
        header.putLong(16, Host.startTime());
        header.putLong(24, worker.getMostSignificantBits());
        header.putLong(32, worker.getLeastSignificantBits());
        UnsafeBuffer gates = new UnsafeBuffer(m, HEADER + table, gateTable);
        for (int i = 0; i < gateSlots; i++) {
            gates.putLong(i * Gates.SLOT + 8, Gates.REVOKED); // no connection yet: nothing passes
        }
        header.putIntVolatile(0, MAGIC);
        return new Inbox(file.getFileName().toString(), Host.pid(), Host.startTime(), worker, header,
                new UnsafeBuffer(m, HEADER, table), new Gates(gates), new ManyToOneRingBuffer(new UnsafeBuffer(m,
                        ringAt, ringSize + RingBufferDescriptor.TRAILER_LENGTH)), m);
    }

    /**
     * Maps a peer's control segment to write into its inbox; every size in its header is checked.
     *
     * @param sealedOnly whether only a sealed segment may be mapped ({@link Segments#open(Path, boolean)})
     */
    static Inbox open(Path file, boolean sealedOnly) throws IOException {
        MappedByteBuffer m = Segments.open(file, sealedOnly);
        try {
            return open(file, m);
        } catch (RuntimeException e) {
            org.agrona.IoUtil.unmap(m); // nothing holds a segment refused here: not left for the GC
            throw e;
        }
    }

    private static Inbox open(Path file, MappedByteBuffer m) {
        if (m.capacity() <= HEADER + RingBufferDescriptor.TRAILER_LENGTH) {
            throw new FencelineException("shm: " + file + " is too small for a control segment");
        }
        UnsafeBuffer header = new UnsafeBuffer(m, 0, HEADER);
        int magic = header.getIntVolatile(0);
        if (magic == CLOSED_MAGIC || magic == BROKEN_MAGIC) {
            throw new EndpointFailedException("shm: the peer worker of " + file + (magic == CLOSED_MAGIC ? " closed"
                    : " stopped its shm transport: its inbox was written outside the ring's protocol"));
        }
        if (magic != MAGIC) {
            throw new FencelineException("shm: " + file + " is not a Fenceline control segment");
        }
        if (header.getInt(4) != VERSION) {
            throw new FencelineException("shm: " + file + " is a control segment of layout version " + header.getInt(4)
                    + ", this runtime reads " + VERSION);
        }
        int slots = header.getInt(40);
        int gateSlots = header.getInt(44);
        long table = (long) slots * SLOT;
        long gateTable = (long) gateSlots * Gates.SLOT;
        long ring = m.capacity() - ringOffset(table, gateTable);
        if (slots < 0 || gateSlots < 0 || ring <= RingBufferDescriptor.TRAILER_LENGTH
                || Long.bitCount(ring - RingBufferDescriptor.TRAILER_LENGTH) != 1) {
            throw new FencelineException("shm: " + file + " has a corrupt layout (" + slots + " key slots, "
                    + gateSlots + " gate slots, a ring of " + ring + " bytes)");
        }
        if (ring - RingBufferDescriptor.TRAILER_LENGTH < ShmSettings.MIN_RING_SIZE) {
            // A smaller ring's largest message would not hold this worker's replies and wireup
            // messages (Agrona refuses a claim past it by throwing, on the polling thread).
            throw new FencelineException("shm: " + file + " has a ring of " + (ring - RingBufferDescriptor.TRAILER_LENGTH)
                    + " bytes, less than the " + ShmSettings.MIN_RING_SIZE + " any worker makes");
        }
        return new Inbox(file.getFileName().toString(), header.getLong(8), header.getLong(16),
                new UUID(header.getLong(24), header.getLong(32)), header, new UnsafeBuffer(m, HEADER, (int) table),
                new Gates(new UnsafeBuffer(m, HEADER + (int) table, (int) gateTable)),
                new ManyToOneRingBuffer(new UnsafeBuffer(m, (int) ringOffset(table, gateTable), (int) ring)), m);
    }

    /**
     * Where the ring starts: on a cache line (the segment is mapped at a page), so that records
     * claimed as whole lines ({@link ShmWire#claimLength}) lie on whole lines.
     */
    static long ringOffset(long keyTable, long gateTable) {
        return org.agrona.BitUtil.align(HEADER + keyTable + gateTable, ShmWire.LINE);
    }

    /**
     * Unmaps a peer's segment nothing else holds (a CONNECT's, refused before it was kept): many
     * such CONNECTs would otherwise hold their mappings until a garbage collection, which these
     * small objects never prompt.
     */
    void unmap() {
        org.agrona.IoUtil.unmap(mapping);
    }

    int slots() {
        return keys.capacity() / SLOT;
    }

    /** Publishes slot {@code i} for a region (its key comes later, then it opens). */
    void claim(int i, long base, long length) {
        int at = i * SLOT;
        keys.putLong(at, 0);
        keys.putLong(at + 16, base);
        keys.putLong(at + 24, length);
        keys.putIntVolatile(at + 8, CLOSED); // not open until the key is there
    }

    /** Opens slot {@code i} under {@code keyId} for {@code access} (its bits, written before the state). */
    void open(int i, long keyId, int access) {
        keys.putLong(i * SLOT, keyId);
        keys.putInt(i * SLOT + 12, access);
        keys.putIntVolatile(i * SLOT + 8, OPEN);
    }

    /** @return whether slot {@code i} was opened for {@code a} (read after {@link #state}) */
    boolean permits(int i, dev.fenceline.Access a) {
        return (keys.getInt(i * SLOT + 12) & (1 << a.ordinal())) != 0;
    }

    void close(int i) {
        keys.putIntVolatile(i * SLOT + 8, CLOSED);
    }

    /** @return whether slot {@code i}'s registered range contains [address, address + n) */
    boolean covers(int i, long address, int n) {
        long base = keys.getLong(i * SLOT + 16);
        long length = keys.getLong(i * SLOT + 24);
        return address >= base && n >= 0 && address - base <= length - n;
    }

    /** @return the slot's state if it holds {@code keyId}, else {@link #FREE} */
    int state(int i, long keyId) {
        if (i < 0 || i >= slots()) {
            return FREE;
        }
        int state = keys.getIntVolatile(i * SLOT + 8);
        return keys.getLong(i * SLOT) == keyId ? state : FREE;
    }

    boolean alive() {
        return Host.alive(pid, start);
    }

    /**
     * Marks this worker's own segment closed (its polling stopped for good before): its peers' watchers
     * let it go and fail their lanes to it, and a connect that maps it is refused.
     */
    void markClosed() {
        header.putIntVolatile(0, CLOSED_MAGIC);
    }

    /**
     * Marks this worker's own segment broken (its inbox was written outside the ring's protocol, and
     * it reads it no more): its peers fail their lanes to it at their next tick, not at keepalive's.
     */
    void markBroken() {
        header.putIntVolatile(0, BROKEN_MAGIC);
    }

    /** @return whether the segment's worker closed (a peer's: read each liveness tick and before a cma transfer) */
    boolean closed() {
        return header.getIntVolatile(0) == CLOSED_MAGIC;
    }

    /** @return whether the segment no longer reads as a live worker's: closed, broken or overwritten */
    boolean stoppedServing() {
        return header.getIntVolatile(0) != MAGIC;
    }

    /**
     * @return whether the segment's worker still serves: its segment is not marked closed or broken
     *     (nor overwritten: every process that maps it can write its header), and its process runs
     */
    boolean serving() {
        return header.getIntVolatile(0) == MAGIC && alive();
    }

    /** @return why this peer no longer serves, for a lane's or a connect's failure */
    String goneReason() {
        int magic = header.getIntVolatile(0);
        if (magic == CLOSED_MAGIC) {
            return "peer worker " + worker + " (process " + pid + ") closed";
        }
        if (magic == BROKEN_MAGIC) {
            return "peer worker " + worker + " (process " + pid + ") stopped its shm transport: its inbox was"
                    + " written outside the ring's protocol";
        }
        return magic == MAGIC ? "peer process " + pid + " is gone"
                : "peer worker " + worker + " (process " + pid + ") no longer serves: its control segment's header"
                        + " was overwritten";
    }

    /** Closes every key-table slot of this worker's own segment: its transport closed, so peers reach none of its regions. */
    void closeAllSlots() {
        for (int i = 0; i < slots(); i++) {
            close(i);
        }
    }

    /** One more heartbeat of this worker's process (its own segment only). */
    @Override
    public void beat() {
        header.putLongOrdered(HEARTBEAT, header.getLong(HEARTBEAT) + 1);
    }

    /** @return the process's heartbeat count: it moves while the process runs, and not while it is stopped */
    long heartbeat() {
        return header.getLongVolatile(HEARTBEAT);
    }

    /**
     * Tells this inbox's owner to forget connection {@code conn} (the dialing side revokes its gate
     * first, or the owner drops the BYE). Not sent if the ring is full.
     *
     * @param conn the connection
     */
    void bye(long conn) {
        int at = ring.tryClaim(ShmWire.BYE, 8);
        if (at >= 0) {
            ring.buffer().putLong(at, conn);
            try {
                ring.commit(at);
                doorbell.ring();
            } catch (IllegalStateException skipped) {
                // the owner skipped it (it took this process for dead): it forgets the connection anyway
            }
        }
    }
}
