package dev.fenceline.transport.shm;

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
 * A worker's control segment: a small header naming its process, and its inbox, an Agrona
 * many-to-one ring buffer in the mapped memory that every peer process writes into (the ring's
 * claim is an atomic on the shared mapping, so producers in different processes are safe).
 *
 * <pre>
 * 0 magic u32 "FLCT"  4 version u32  8 pid u64  16 start u64  24 worker id 16  64 ring ...
 * </pre>
 */
final class Inbox {
    static final int HEADER = 64;
    private static final int MAGIC = 0x464C4354;

    final String name;
    final long pid;
    final long start;
    final UUID worker;
    final ManyToOneRingBuffer ring;
    /** Replies that did not fit yet (the peer is slow): sent in order before any newer one. */
    final ArrayDeque<byte[]> backlog = new ArrayDeque<>();
    final ArrayDeque<Integer> backlogTypes = new ArrayDeque<>();

    private Inbox(String name, long pid, long start, UUID worker, ManyToOneRingBuffer ring) {
        this.name = name;
        this.pid = pid;
        this.start = start;
        this.worker = worker;
        this.ring = ring;
    }

    /** Creates this worker's own control segment. */
    static Inbox create(Path file, int ringSize, UUID worker) throws IOException {
        MappedByteBuffer m = Segments.create(file, HEADER + ringSize + RingBufferDescriptor.TRAILER_LENGTH);
        UnsafeBuffer header = new UnsafeBuffer(m, 0, HEADER);
        header.putInt(4, 1);
        header.putLong(8, Host.pid());
        header.putLong(16, Host.startTime());
        header.putLong(24, worker.getMostSignificantBits());
        header.putLong(32, worker.getLeastSignificantBits());
        header.putIntVolatile(0, MAGIC);
        return new Inbox(file.getFileName().toString(), Host.pid(), Host.startTime(), worker,
                new ManyToOneRingBuffer(new UnsafeBuffer(m, HEADER, ringSize + RingBufferDescriptor.TRAILER_LENGTH)));
    }

    /** Maps a peer's control segment to write into its inbox. */
    static Inbox open(Path file) throws IOException {
        MappedByteBuffer m = Segments.open(file);
        if (m.capacity() <= HEADER + RingBufferDescriptor.TRAILER_LENGTH) {
            throw new FencelineException("shm: " + file + " is too small for a control segment");
        }
        UnsafeBuffer header = new UnsafeBuffer(m, 0, HEADER);
        if (header.getIntVolatile(0) != MAGIC) {
            throw new FencelineException("shm: " + file + " is not a Fenceline control segment");
        }
        int ring = m.capacity() - HEADER;
        if (Integer.bitCount(ring - RingBufferDescriptor.TRAILER_LENGTH) != 1) {
            throw new FencelineException("shm: " + file + " has a corrupt ring of " + ring + " bytes");
        }
        return new Inbox(file.getFileName().toString(), header.getLong(8), header.getLong(16),
                new UUID(header.getLong(24), header.getLong(32)), new ManyToOneRingBuffer(new UnsafeBuffer(m, HEADER,
                        ring)));
    }

    boolean alive() {
        return Host.alive(pid, start);
    }
}
