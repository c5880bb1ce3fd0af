package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What peers together can make a worker hold is bounded: past {@code max-incoming-lanes}, a connect
 * from a worker not seen before is refused with the bound named, and the peers already connected
 * are served; once one of them closes, its room is taken again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxIncomingLimitsTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /**
     * Over UCT's tcp the refusal goes on a channel still connecting, so it waits in the channel's
     * backlog: the channel ends only once the refusal has gone.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"tls = [posix]", "tls = [tcp], devices = [lo], tcp-unchecked-writes = accept"})
    void connectsPastTheWorkersIncomingLaneBoundAreRefusedAndTheOthersServed(String uct) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { " + uct + " }\n"
                + "fenceline.transport.ucx.max-incoming-lanes = 2\n"
                + "fenceline.transport.ucx.reconnect.give-up-after = 1s"))) {
            Worker target = await(f.newWorker("target"));
            MemoryRegion r = target.allocate(64);
            Endpoint[] held = new Endpoint[2];
            Worker[] origins = new Worker[2];
            for (int i = 0; i < 2; i++) {
                origins[i] = await(f.newWorker("origin-" + i));
                held[i] = await(origins[i].connect(target.address()));
                assertEquals(1, held[i].lanes().size(), "one UCT lane per endpoint");
            }
            Worker third = await(f.newWorker("third"));
            Throwable refused = assertThrows(ExecutionException.class, () -> await(third.connect(target.address())))
                    .getCause();
            assertTrue(String.valueOf(refused.getMessage()).contains("max-incoming-lanes = 2"), refused.toString());
            for (int i = 0; i < 2; i++) {
                put(origins[i], held[i], r, i + 1);
            }
            held[0].close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            Endpoint later = null;
            while (later == null) { // the target hears of the close on its progress thread
                try {
                    later = await(third.connect(target.address()));
                } catch (ExecutionException stillFull) {
                    assertTrue(System.nanoTime() < deadline, "the closed endpoint's lane was never given back: "
                            + stillFull.getCause());
                    Thread.sleep(20); // each refusal is a WARN line at the target: not a busy loop of them
                }
            }
            put(third, later, r, 3);
        }
    }

    /**
     * Channels outlive their lanes (a peer's later connects use them again), so lanes alone do not
     * bound what connects make this worker hold: past max-incoming-channels a connect is refused,
     * and the endpoints already there are served.
     */
    @Test
    void connectsPastTheWorkersIncomingChannelBoundAreRefusedAndTheOthersServed() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], max-incoming-channels = 1 }\n"
                + "fenceline.transport.ucx.reconnect.give-up-after = 1s"))) {
            Worker target = await(f.newWorker("target"));
            MemoryRegion r = target.allocate(64);
            Worker first = await(f.newWorker("first"));
            Endpoint held = await(first.connect(target.address()));
            Worker second = await(f.newWorker("second"));
            Throwable refused = assertThrows(ExecutionException.class, () -> await(second.connect(target.address())))
                    .getCause();
            assertTrue(String.valueOf(refused.getMessage()).contains("max-incoming-channels = 1"), refused.toString());
            put(first, held, r, 1);
            held.close();
            await(first.close()); // it leaves: the target lets go of its channel
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            Endpoint later = null;
            while (later == null) {
                try {
                    later = await(second.connect(target.address()));
                } catch (ExecutionException stillFull) {
                    assertTrue(System.nanoTime() < deadline, "the channel of the worker that left was never given"
                            + " back: " + stillFull.getCause());
                    Thread.sleep(20);
                }
            }
            put(second, later, r, 2);
        }
    }

    private static void put(Worker from, Endpoint ep, MemoryRegion r, long value) throws Exception {
        RemoteKey k = from.unpackRemoteKey(r.remoteKey().toBytes());
        await(ep.put(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value), r.address(), k));
        assertEquals(value, r.buffer().order(ByteOrder.nativeOrder()).getLong(0));
    }
}
