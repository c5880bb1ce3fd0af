package dev.fenceline.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The tcp transport's frame codec, per frame: encoding a small PUT (copied into one pooled buffer,
 * the lane's path up to its copy limit), an atomic and an acknowledgement, and decoding each at
 * the other side. Beside the
 * transport's tests, because the codec is package-private.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Dio.netty.leakDetection.level=disabled")
public class FrameCodecBenchmark {
    /** Payload bytes of the PUT frames. */
    @Param({"8", "1024"})
    public int size;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private ByteBuffer payload;
    private ByteBuf putFrame;
    private ByteBuf atomicFrame;
    private ByteBuf ackFrame;
    private long token;

    /** Counts what the decoder hands over, so nothing is optimized away. */
    private static final class Sink implements FrameHandler {
        Blackhole bh;

        @Override
        public void put(long token, long origin, long seq, long low, long key, long address, ByteBuf data) {
            bh.consume(token + seq + data.readableBytes());
        }

        @Override
        public void atomic(long token, long origin, long seq, long low, long key, long address, int kind,
                dev.fenceline.AtomicOp op, int width, long operand, long compare) {
            bh.consume(token + operand + width);
        }

        @Override
        public void ack(long token, long value) {
            bh.consume(token + value);
        }
    }

    private final Sink sink = new Sink();

    /** Frames as the decoder sees them: from the version byte on, without the length prefix. */
    @Setup(Level.Trial)
    public void frames() {
        payload = ByteBuffer.allocateDirect(size);
        putFrame = strip(FrameEncoder.put(alloc, 1, 2, 3, 0, 4, 0x1000, payload));
        atomicFrame = strip(FrameEncoder.atomic(alloc, 1, 2, 3, 0, 4, 0x1000, Wire.ATOMIC_FETCH,
                dev.fenceline.AtomicOp.ADD, 8, 1, 0));
        ackFrame = strip(FrameEncoder.ack(alloc, 1, 42));
    }

    private static ByteBuf strip(ByteBuf withLength) {
        withLength.skipBytes(Wire.LENGTH_FIELD);
        return withLength;
    }

    /** Releases the frames. */
    @TearDown(Level.Trial)
    public void release() {
        putFrame.release();
        atomicFrame.release();
        ackFrame.release();
    }

    /** @return bytes written: a whole small PUT frame (the buffer is released, as the channel would) */
    @Benchmark
    public int encodePut() {
        ByteBuf b = FrameEncoder.put(alloc, token++, 2, token, 0, 4, 0x1000, payload);
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /** @return bytes written: a fetching atomic */
    @Benchmark
    public int encodeAtomic() {
        ByteBuf b = FrameEncoder.atomic(alloc, token++, 2, token, 0, 4, 0x1000, Wire.ATOMIC_FETCH,
                dev.fenceline.AtomicOp.ADD, 8, 1, 0);
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /** @return bytes written: the acknowledgement a target sends back */
    @Benchmark
    public int encodeAck() {
        ByteBuf b = FrameEncoder.ack(alloc, token++, 42);
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /**
     * @param bh the sink's consumer
     * @throws MalformedFrameException never (the frame is well formed)
     */
    @Benchmark
    public void decodePut(Blackhole bh) throws MalformedFrameException {
        sink.bh = bh;
        FrameDecoder.decode(putFrame, sink, 1 << 20);
    }

    /**
     * @param bh the sink's consumer
     * @throws MalformedFrameException never
     */
    @Benchmark
    public void decodeAtomic(Blackhole bh) throws MalformedFrameException {
        sink.bh = bh;
        FrameDecoder.decode(atomicFrame, sink, 1 << 20);
    }

    /**
     * @param bh the sink's consumer
     * @throws MalformedFrameException never
     */
    @Benchmark
    public void decodeAck(Blackhole bh) throws MalformedFrameException {
        sink.bh = bh;
        FrameDecoder.decode(ackFrame, sink, 1 << 20);
    }
}
