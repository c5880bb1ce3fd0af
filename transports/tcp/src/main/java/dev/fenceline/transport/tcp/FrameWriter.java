package dev.fenceline.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes one lane's frames into its connection. Frames queue from one producer at a time (the
 * endpoint actor, or a calling thread posting under the endpoint's grant, serialized by the lane's
 * lock) and the event loop writes them in batches, one flush per batch. A frame sent while the
 * lane had nothing else outstanding goes straight into the socket on the producer's thread instead
 * (a non-blocking write, {@link DirectSocket}): a caller waiting for one answer then waits for no
 * event-loop wake-up, and a stream of operations still leaves in batches. A direct write happens
 * only while Netty holds none of the lane's bytes and no batch is being written, so the stream's
 * order is kept; what the socket does not take at once is left to the event loop.
 */
final class FrameWriter {
    private final Channel channel;
    /** Null where every frame goes through the event loop. */
    private final DirectSocket socket;
    /**
     * Unbounded (an offer never fails, so no part of a frame is ever dropped), in arrays of 1,024
     * slots reused while the writer keeps up: a lane holds one from the start (about 4 KiB), and a
     * backlog past it takes more; a linked queue's node per frame was an allocation per operation
     * (FrameWriterAllocationTest). Producers are serialized by the lane's lock and consumers by
     * {@link #writing}: the many-producer queue is here for its arrays, the unbounded one Netty has.
     */
    private final Queue<ByteBuf> outbound = PlatformDependent.newMpscQueue();
    /**
     * Held by whoever consumes {@link #outbound}: a batch scheduled or running on the event loop,
     * or the producer writing directly.
     */
    private final AtomicBoolean writing = new AtomicBoolean();
    private final AtomicLong directFrames = new AtomicLong();
    /**
     * Set once the connection failed ({@link #release}): from then on nothing queued is written.
     * A frame goes in parts, queued one by one, and the failure may drop the first parts while the
     * producer is still queueing the rest; written to the still-open socket, they would be read as
     * the start of another frame.
     */
    private volatile boolean released;
    private final Runnable drain = this::drain;
    private final Runnable rejected;

    /**
     * @param channel the lane's connection
     * @param socket its socket for direct writes, or null
     * @param rejected run on the producer's thread when the event loop refuses work (the transport is closed)
     */
    FrameWriter(Channel channel, DirectSocket socket, Runnable rejected) {
        this.channel = channel;
        this.socket = socket;
        this.rejected = rejected;
    }

    /** @param frame a frame, or part of one, to send after those queued before it (producer only) */
    void enqueue(ByteBuf frame) {
        outbound.offer(frame);
    }

    /**
     * Sends what was queued: the producer, or the event loop handing what was queued meanwhile to a
     * batch ({@link #release}).
     *
     * @param direct whether to write on this thread if nothing else is being written
     */
    void send(boolean direct) {
        if (!writing.compareAndSet(false, true)) {
            return; // the batch under way takes the new frames too
        }
        if (released) {
            dropQueued();
            return;
        }
        if (direct && socket != null && writeDirectly()) {
            writing.set(false);
            return; // nothing is left: the producer is this thread, and it queued nothing since
        }
        try {
            channel.eventLoop().execute(drain);
        } catch (RejectedExecutionException shutDown) {
            releaseQueued();
            writing.set(false);
            rejected.run();
        }
    }

    /** @return how many frames (or parts of frames) went into the socket on the producer's thread */
    long directFrames() {
        return directFrames.get();
    }

    /** @return true if every queued frame went into the socket */
    private boolean writeDirectly() {
        ChannelOutboundBuffer pending = channel.unsafe().outboundBuffer();
        if (pending == null || pending.totalPendingWriteBytes() != 0) {
            return false; // closed, or Netty still holds earlier bytes: they go first
        }
        ByteBuf b;
        while ((b = outbound.peek()) != null) {
            if (!b.isReadable()) {
                outbound.poll().release(); // an empty part (an active message without a header)
                continue;
            }
            if (!b.hasMemoryAddress()) {
                return false; // a heap buffer: Netty copies it out
            }
            int n = socket.write(b);
            if (n < 0) {
                return false; // closed or failed: the event loop's write finds out and reports it
            }
            if (n < b.readableBytes()) {
                b.skipBytes(n); // the rest goes first in the event loop's batch
                return false;
            }
            outbound.poll();
            b.release();
            directFrames.lazySet(directFrames.get() + 1);
        }
        return true;
    }

    /** Event loop: writes everything queued, then one flush (one syscall for the batch). */
    private void drain() {
        do {
            if (released || !channel.isActive()) {
                releaseQueued();
            } else {
                ByteBuf b;
                boolean wrote = false;
                while ((b = outbound.poll()) != null) {
                    channel.write(b, channel.voidPromise());
                    wrote = true;
                }
                if (wrote) {
                    channel.flush();
                }
            }
            writing.set(false);
        } while (!outbound.isEmpty() && writing.compareAndSet(false, true));
    }

    /**
     * The connection died (event loop): drops what is queued, and everything queued later, unless a
     * batch or a direct write is under way, which finishes what it took and leaves the rest to be
     * dropped: the stream ends, perhaps mid-frame, but nothing follows a gap.
     */
    void release() {
        released = true;
        if (writing.compareAndSet(false, true)) {
            dropQueued();
        }
    }

    /** Holding {@link #writing}: drops what is queued, and what the producer queues meanwhile. */
    private void dropQueued() {
        do {
            releaseQueued();
            writing.set(false);
        } while (!outbound.isEmpty() && writing.compareAndSet(false, true));
    }

    private void releaseQueued() {
        ByteBuf b;
        while ((b = outbound.poll()) != null) {
            b.release();
        }
    }
}
