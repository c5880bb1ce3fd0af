package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Operations without a completion of their own: the next flush completes them and reports the first
 * error among them; arguments that can never succeed are refused at once; three lanes, one of
 * which fails while they run, lose none and apply none twice.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ImplicitCompletionTest {
    @Test
    void theNextFlushCompletesThemAndReportsTheirFirstError() throws Exception {
        try (FailoverTest.Rig r = FailoverTest.Rig.of(FailoverTest.THREE_LANES, 1 << 20)) {
            for (int i = 0; i < 2000; i++) {
                r.ep().atomicPostImplicit64(AtomicOp.ADD, r.region().address(), r.region().remoteKey(), 1);
                r.ep().putImplicit(ByteBuffer.allocate(64).putLong(0, i), r.region().address() + 64 + 64L * (i % 100),
                        r.region().remoteKey());
                if (i == 1000) {
                    r.net().failLane(r.ep(), 0); // failover: implicit operations are restarted like any
                }
            }
            r.ep().flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
            assertEquals(2000, r.word(0), "every implicit ADD applied exactly once");

            // Refused at once: no completion would ever report it.
            RemoteAccessException bad = assertThrows(RemoteAccessException.class,
                    () -> r.ep().putImplicit(ByteBuffer.allocate(8), r.region().address() + (1 << 20),
                            r.region().remoteKey()));
            assertEquals(Reason.OUT_OF_BOUNDS, bad.reason());
            assertThrows(RemoteAccessException.class,
                    () -> r.ep().atomicPostImplicit64(AtomicOp.SWAP, r.region().address(), r.region().remoteKey(), 1));

            // Refused at the target: the next flush says so, once.
            r.region().close();
            r.ep().putImplicit(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey());
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> r.ep().flush().toCompletableFuture().get(30, TimeUnit.SECONDS));
            assertEquals(Reason.REGION_CLOSED, assertInstanceOf(RemoteAccessException.class, e.getCause()).reason());
            r.ep().flush().toCompletableFuture().get(30, TimeUnit.SECONDS); // the error was reported
        }
    }

    @Test
    void closeReportsTheFailureOfItsFlushAndClosesAllTheSame() throws Exception {
        try (FailoverTest.Rig r = FailoverTest.Rig.of(FailoverTest.THREE_LANES, 1 << 20)) {
            r.region().close();
            r.ep().putImplicit(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey());
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> r.ep().close().toCompletableFuture().get(30, TimeUnit.SECONDS));
            assertEquals(Reason.REGION_CLOSED, assertInstanceOf(RemoteAccessException.class, e.getCause()).reason());
            assertThrows(EndpointClosedException.class,
                    () -> r.ep().putImplicit(ByteBuffer.allocate(8), 0, r.region().remoteKey()));
            assertEquals(0, r.a().endpoints().size(), "the worker let it go");
        }
    }

    @Test
    void onTheSimulationTooAndTheRuntimeClosesAfterIt() {
        try (FailoverTest.SimRig r = FailoverTest.SimRig.of(41, FailoverTest.THREE_LANES, 1 << 20)) {
            r.region().close();
            r.ep().putImplicit(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey());
            java.util.concurrent.CompletionException e = assertThrows(java.util.concurrent.CompletionException.class,
                    () -> r.sim().await(r.ep().close()));
            assertEquals(Reason.REGION_CLOSED, assertInstanceOf(RemoteAccessException.class, e.getCause()).reason());
            assertThrows(EndpointClosedException.class,
                    () -> r.ep().putImplicit(ByteBuffer.allocate(8), 0, r.region().remoteKey()));
        } // the rig's close closes the runtime on the simulation: it must not hang
    }
}
