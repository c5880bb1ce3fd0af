package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Software puts over UCT tcp whose payload UCT sends from the caller's buffer (am_zcopy): from
 * {@link UcxRequests#IN_PLACE_MIN} up, from native memory. The bytes land where they were put
 * whatever path took them, and a burst that fills the socket has UCT keep reading payloads after the
 * call returned, each of which completes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxZeroCopyPutTest {
    private static final int REGION = 1 << 20;
    private static Fenceline fenceline;
    private static Worker origin;
    private static MemoryRegion region;
    private static RemoteKey key;
    private static Endpoint ep;
    private static UctEndpoint uct;

    @BeforeAll
    static void connect() throws Exception {
        UcxAssumptions.ucxAvailable();
        // Socket buffers smaller than one put, so that UCT keeps sending some payloads after the call.
        fenceline = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [tcp], devices = [lo], tcp-unchecked-writes = accept,"
                + " uct { tcp { SNDBUF = 64K, RCVBUF = 64K } } }"));
        origin = await(fenceline.newWorker("origin"));
        Worker target = await(fenceline.newWorker("target"));
        region = target.allocate(REGION);
        key = origin.unpackRemoteKey(region.remoteKey().toBytes());
        ep = await(origin.connect(target.address()));
        UcxLane lane = UcxLane.byId(ep.lanes().get(0).connectionId());
        assertTrue(lane != null && lane.channel.amZeroCopyMax > 0, "UCT tcp sends active messages zero-copy");
        uct = lane.channel.ep;
    }

    @AfterAll
    static void close() {
        if (fenceline != null) {
            fenceline.close();
        }
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** A direct buffer of {@code n} bytes after {@code lead} others, its position at them, filled by {@code seed}. */
    private static ByteBuffer source(int lead, int n, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(lead + n);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (i * 31 + seed));
        }
        return b.position(lead);
    }

    private static void assertLanded(ByteBuffer src, long at, String what) {
        for (int i = 0; i < src.remaining(); i++) {
            byte want = src.get(src.position() + i);
            byte got = region.buffer().get((int) at + i);
            if (want != got) {
                assertEquals(want, got, what + ": byte " + i);
            }
        }
    }

    @Test
    void putsFromTheThresholdUpGoFromTheCallersBufferAndLandWhole() throws Exception {
        int min = UcxRequests.IN_PLACE_MIN;
        int[][] cases = {{min - 1, 0, 0}, {min, 0, 0}, {min + 5, 3, 17}, {200 << 10, 7, 4096 + 1}};
        for (int[] c : cases) {
            int n = c[0];
            ByteBuffer src = source(c[1], n, n);
            int before = uct.zeroCopyMessages;
            await(ep.put(src, region.address() + c[2], key));
            assertEquals(n >= min ? 1 : 0, uct.zeroCopyMessages - before, "zero-copy sends for a put of " + n + " bytes");
            assertLanded(src, c[2], "a put of " + n + " bytes at " + c[2] + " from position " + c[1]);
        }
        ByteBuffer heap = ByteBuffer.allocate(64 << 10);
        heap.put(5, (byte) 9);
        int before = uct.zeroCopyMessages;
        await(ep.put(heap, region.address(), key));
        assertEquals(0, uct.zeroCopyMessages - before, "a heap buffer's bytes are copied, never read from where they are");
        assertLanded(heap, 0, "a put from the heap");
    }

    @Test
    void aBurstThatFillsTheSocketHasEveryPayloadCompleteAndLand() throws Exception {
        int n = 200 << 10;
        int puts = 4 * (REGION / n); // each far more than the socket holds at once
        ByteBuffer[] sources = new ByteBuffer[REGION / n];
        for (int i = 0; i < sources.length; i++) {
            sources[i] = source(i, n, i * 7 + 1);
        }
        int inProgressBefore = uct.zeroCopyInProgress;
        int completedBefore = uct.zeroCopyCompleted;
        for (int round = 0; round < puts / sources.length; round++) {
            for (int i = 0; i < sources.length; i++) {
                ep.putImplicit(sources[i], region.address() + (long) i * n, key);
            }
        }
        await(ep.flush());
        int inProgress = uct.zeroCopyInProgress - inProgressBefore;
        assertTrue(inProgress > 0, "UCT read some payload after the call returned (" + puts + " puts of " + n + ")");
        assertEquals(inProgress, uct.zeroCopyCompleted - completedBefore,
                "every payload UCT kept reading completed before the flush");
        for (int i = 0; i < sources.length; i++) {
            assertLanded(sources[i], (long) i * n, "put " + i + " of the burst");
        }
    }
}
