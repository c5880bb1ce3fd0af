package dev.fenceline.transport.ucx;

import dev.fenceline.internal.RegistrationTable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The target's side of an 8-byte active message a calling thread sent, per message, from the bytes
 * UCT delivered to the handler's return and the ACK held (sent sixteen to a reply, as in a stream or
 * a ping-pong): as an 80-byte REQUEST, and as a SHORT MESSAGE. What Fenceline's receiving code costs
 * beside UCT's own poll, without the cache misses of a peer's writes. Beside the transport's tests,
 * because the target is package-private.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED")
public class UcxTargetBenchmark {
    private static final long CONN = 0x1234_5678_9abcL;
    private static final int ID = 1;

    private RegistrationTable memory;
    private UcxTarget target;
    private UnsafeBuffer request;
    private int requestLength;
    private UnsafeBuffer shortMessage;
    private int shortLength;
    private long handled;
    private long replies;

    @Setup(Level.Trial)
    public void setUp() {
        memory = new RegistrationTable(UUID.randomUUID(), "b");
        memory.setHandler(ID, (header, payload) -> handled += payload.remaining());
        var windows = new dev.fenceline.spi.support.ExactlyOnceWindows("worker 'b'", 1024,
                java.time.Duration.ofMinutes(1), 1 << 20, 1 << 22, System::nanoTime);
        target = new UcxTarget("b", memory, windows, 8192, 1 << 20, 10_000_000_000L, 3_600_000_000_000L,
                (channel, b, n) -> replies += n);
        target.open(CONN, new UcxIncoming(new UcxPeer(UUID.randomUUID(), new UcxAddress("h", 1, 1, List.of(),
                null)), null, Integer.MAX_VALUE));
        target.answers().holdFromNowOn();

        ByteBuffer payload = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 42);
        request = new UnsafeBuffer(ByteBuffer.allocateDirect(256).order(ByteOrder.nativeOrder()));
        request.putLong(UcxWire.CONN, CONN);
        request.putLong(UcxWire.TOKEN, Long.MIN_VALUE | 7);
        request.putLong(UcxWire.ORIGIN, 99);
        request.putLong(UcxWire.SEQ, -1); // a direct message: no exactly-once number
        request.putLong(UcxWire.LOW, -1);
        request.putByte(UcxWire.KIND, UcxWire.MESSAGE);
        request.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
        request.putInt(UcxWire.LENGTH, ID);
        request.putLong(UcxWire.OPERAND, 0); // its header's length
        request.putLong(UcxWire.ADDRESS, 0);
        request.putBytes(UcxWire.REQUEST_HEADER, payload, 0, 8);
        requestLength = UcxWire.REQUEST_HEADER + 8;

        shortMessage = new UnsafeBuffer(ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder()));
        shortLength = UcxRequests.writeShort(shortMessage, CONN, Long.MIN_VALUE | 7, 99, ID,
                ByteBuffer.allocate(0), payload, true);
    }

    @TearDown(Level.Trial)
    public void check() {
        if (handled == 0 || replies == 0) {
            throw new IllegalStateException("the handler ran " + handled / 8 + " times, " + replies
                    + " bytes of replies: the target refused what it was given");
        }
    }

    @Benchmark
    public long request() {
        target.onRequest(request, 0, requestLength);
        return handled;
    }

    @Benchmark
    public long shortMessage() {
        target.onShortMessage(shortMessage, 0, shortLength);
        return handled;
    }
}
