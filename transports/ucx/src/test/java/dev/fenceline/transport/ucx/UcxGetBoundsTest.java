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
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two workers whose UCT tcp segments differ, as during a rolling change of configuration: the
 * target's replies carry 64 KiB, the origin's requests 256 KiB. The target's CONNECTED says how large a
 * get it answers on each lane, and the origin splits its gets there, so a get larger than the
 * target's replies carry comes back whole instead of being refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxGetBoundsTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static Fenceline over(String segments) {
        return Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\nfenceline.transport.ucx {"
                + " tls = [tcp], devices = [lo], tcp-unchecked-writes = accept, uct { tcp { " + segments + " } } }"));
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void getsAreSplitAtWhatTheTargetsRepliesCarry() throws Exception {
        try (Fenceline large = over("TX_SEG_SIZE = 256K, RX_SEG_SIZE = 256K");
                Fenceline small = over("TX_SEG_SIZE = 64K, RX_SEG_SIZE = 256K")) {
            Worker origin = await(large.newWorker("origin"));
            Worker target = await(small.newWorker("target"));
            int size = 200 << 10;
            MemoryRegion r = target.allocate(size);
            for (int i = 0; i < size; i++) {
                r.buffer().put(i, (byte) (i * 13 + 5));
            }
            RemoteKey k = origin.unpackRemoteKey(r.remoteKey().toBytes());
            Endpoint ep = await(origin.connect(target.address()));
            int bound = UcxLane.byId(ep.lanes().get(0).connectionId()).maxFragment();
            assertTrue(bound < 64 << 10, "the lane splits at " + bound + " bytes, more than the target's replies carry");
            ByteBuffer dst = ByteBuffer.allocateDirect(size);
            await(ep.get(dst, r.address(), k));
            for (int i = 0; i < size; i++) {
                if (dst.get(i) != r.buffer().get(i)) {
                    assertEquals(r.buffer().get(i), dst.get(i), "byte " + i + " of the get");
                }
            }
            // The other way the origin's replies carry more: the target's lane keeps its own bound.
            MemoryRegion back = origin.allocate(size);
            Endpoint rev = await(target.connect(origin.address()));
            await(rev.put(r.buffer().duplicate().clear(), back.address(), target.unpackRemoteKey(back.remoteKey().toBytes())));
            ByteBuffer again = ByteBuffer.allocateDirect(size);
            await(rev.get(again, back.address(), target.unpackRemoteKey(back.remoteKey().toBytes())));
            assertEquals(r.buffer().duplicate().clear(), again.clear(), "the get back");
        }
    }

    private static UcxWireup.Connected connected(List<Integer> maxGets) {
        return new UcxWireup.Connected(1, List.of(), maxGets);
    }

    @Test
    void boundsThatDoNotMatchTheLanesOrWouldShredTheirOperationsFailTheConnect() {
        boolean[] both = {true, false};
        assertEquals(null, connected(List.of(UcxWireup.MIN_GET_BOUND, 0)).unusableFor(both),
                "a lane without messages may have no bound");
        assertEquals("get bounds for 1 lane(s), where it opened 2", connected(List.of(65_000)).unusableFor(both));
        assertEquals("get bounds for 3 lane(s), where it opened 2",
                connected(List.of(65_000, 0, 0)).unusableFor(both));
        assertEquals("gets of at most 1023 bytes on lane 0, below the 1024 any UCT message carries",
                connected(List.of(UcxWireup.MIN_GET_BOUND - 1, 65_000)).unusableFor(both));
    }
}
