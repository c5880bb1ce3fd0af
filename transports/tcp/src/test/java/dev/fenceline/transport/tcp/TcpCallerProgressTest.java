package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.CallerProgress;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Worker#progressHere()} over tcp: while a worker's I/O is lent to a thread, its sockets are
 * read in that thread's {@code progress()} calls and nowhere else; operations complete, in order
 * and exactly once, when it polls; a second taker is refused; a worker closes while lent.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpCallerProgressTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /** Polls every handle until {@code f} is done, failing after 10 s. */
    private static <T> T pollFor(CompletionStage<T> s, CallerProgress... progress) throws Exception {
        CompletableFuture<T> f = s.toCompletableFuture();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!f.isDone()) {
            assertTrue(System.nanoTime() - deadline < 0, "not done within 10 s of polling: " + f);
            for (CallerProgress p : progress) {
                p.progress();
            }
        }
        return f.get();
    }

    @Test
    void aLentWorkersSocketsAreReadOnlyByItsPolls() throws Exception {
        try (Fenceline fl = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            MemoryRegion region = b.allocate(4096);
            Endpoint ab = await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            ByteBuffer word = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            await(ab.put(word.putLong(0, 1), region.address(), key)); // connected, and a put answered

            CallerProgress atB = b.progressHere();
            try {
                CompletableFuture<Void> put = ab.put(word.putLong(0, 2), region.address(), key).toCompletableFuture();
                // Were b's loop not lent, the put would be applied and answered by now. (Spinning: a
                // borrower that sleeps 10 ms or more loses the loop.)
                for (long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                        System.nanoTime() - until < 0;) {
                    Thread.onSpinWait();
                }
                assertEquals(1, region.buffer().order(ByteOrder.nativeOrder()).getLong(0),
                        "nothing reads b's sockets but its borrower's polls");
                assertFalse(put.isDone());
                pollFor(put, atB);
                assertEquals(2, region.buffer().order(ByteOrder.nativeOrder()).getLong(0));

                // Many operations in order while polled: each fetch-add sees the one before.
                for (long i = 0; i < 2_000; i++) {
                    long before = pollFor(ab.atomicFetch64(AtomicOp.ADD, region.address() + 8, key, 1), atB);
                    assertEquals(i, before, "fetch-add " + i + " applied once, in order");
                }
            } finally {
                atB.close();
            }
            // Given back: b's own event loop serves again.
            assertEquals(2_000L, await(ab.atomicFetch64(AtomicOp.ADD, region.address() + 8, key, 0)));
            assertEquals(0, a.statistics().reconfigurations(), a.statistics().toString());
        }
    }

    @Test
    void bothSidesLentToOneThreadPingPong() throws Exception {
        try (Fenceline fl = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            MemoryRegion atA = a.allocate(64);
            MemoryRegion atB = b.allocate(64);
            Endpoint ab = await(a.connect(b.address()));
            Endpoint ba = await(b.connect(a.address()));
            RemoteKey keyB = a.unpackRemoteKey(atB.remoteKey().toBytes());
            RemoteKey keyA = b.unpackRemoteKey(atA.remoteKey().toBytes());
            ByteBuffer ping = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            ByteBuffer pong = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            ByteBuffer seenAtA = atA.buffer().order(ByteOrder.nativeOrder());
            ByteBuffer seenAtB = atB.buffer().order(ByteOrder.nativeOrder());
            try (CallerProgress pa = a.progressHere(); CallerProgress pb = b.progressHere()) {
                for (long i = 1; i <= 1_000; i++) {
                    ab.put(ping.putLong(0, i), atB.address(), keyB);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (seenAtB.getLong(0) != i) {
                        assertTrue(System.nanoTime() - deadline < 0, "ping " + i + " not seen");
                        pb.progress();
                        pa.progress();
                    }
                    ba.put(pong.putLong(0, i), atA.address(), keyA);
                    while (seenAtA.getLong(0) != i) {
                        assertTrue(System.nanoTime() - deadline < 0, "pong " + i + " not seen");
                        pa.progress();
                        pb.progress();
                    }
                }
                pollFor(ab.flush(), pa, pb);
                pollFor(ba.flush(), pa, pb);
            }
            assertEquals(1_000, seenAtA.getLong(0));
            assertEquals(1_000, seenAtB.getLong(0));
        }
    }

    @Test
    void aSecondTakerIsRefusedAndAClosedWorkerLendsNothing() throws Exception {
        try (Fenceline fl = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = await(fl.newWorker("a"));
            AtomicReference<Throwable> refused = new AtomicReference<>();
            try (CallerProgress p = a.progressHere()) {
                Thread other = new Thread(() -> {
                    try {
                        a.progressHere();
                    } catch (Throwable t) {
                        refused.set(t);
                    }
                    try {
                        p.progress();
                    } catch (IllegalStateException e) {
                        refused.get().addSuppressed(e);
                    }
                }, "second-taker");
                other.start();
                while (other.isAlive()) { // spinning: a borrower that blocks 10 ms or more loses the loop
                    Thread.onSpinWait();
                }
                assertNotNull(refused.get(), "a second taker is refused");
                assertTrue(refused.get() instanceof IllegalStateException
                        && refused.get().getMessage().contains(Thread.currentThread().getName()),
                        "it names the holder: " + refused.get());
                assertEquals(1, refused.get().getSuppressed().length, "only the taker polls");
            }
            try (CallerProgress again = a.progressHere()) { // given back, it can be taken again
                again.progress();
            }
            await(a.close());
            IllegalStateException closed = assertThrows(IllegalStateException.class, a::progressHere);
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        }
    }

    @Test
    void aBorrowerWaitingForAWorkersCloseWithAPutInFlightIsNotStuck() throws Exception {
        try (Fenceline fl = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            MemoryRegion region = b.allocate(64);
            Endpoint ab = await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            CallerProgress atA = a.progressHere();
            CompletableFuture<Void> put = ab.put(ByteBuffer.allocateDirect(8), region.address(), key)
                    .toCompletableFuture();
            long t0 = System.nanoTime();
            // Its answer needs a's loop, lent to this thread, which now blocks on the close: the loop
            // is taken back and the close flushes the put.
            await(a.close());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 3_000, "closed in " + ms + " ms, not after a keepalive timeout");
            assertTrue(put.isDone() && !put.isCompletedExceptionally(), "the put was answered: " + put);
            assertEquals(0, atA.progress());
            atA.close();
        }
    }

    /**
     * A borrower's poll holds the answers it earned until its next poll, but not those of a read
     * that ended at the peer's end of stream: the connection closes right after, and they go first.
     */
    @Test
    void answersToAPeerThatHalfClosedLeaveBeforeTheConnectionCloses() throws Exception {
        try (Fenceline fl = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker b = await(fl.newWorker("b"));
            MemoryRegion counter = b.allocate(64);
            java.net.InetSocketAddress listening = TcpAddress.decode(b.address().transportAddress("tcp")).get(0);
            try (RawPeer peer = new RawPeer(listening, b.address().workerId(), null);
                    CallerProgress atB = b.progressHere()) {
                peer.write(FrameEncoder.atomic(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, 7, 1, -1, 0,
                        counter.remoteKey().keyId(), counter.address(), Wire.ATOMIC_POST, AtomicOp.ADD, 8, 5, 0));
                peer.shutdownOutput();
                CompletableFuture<java.util.List<Object>> answer = CompletableFuture.supplyAsync(() -> {
                    try {
                        return peer.answer();
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
                java.util.List<Object> a = pollFor(answer, atB);
                assertEquals("ACK", a.get(0), "answered before the close: " + a);
                assertEquals(5, counter.buffer().order(ByteOrder.nativeOrder()).getLong(0));
            }
        }
    }

    @Test
    void aWorkerClosesWhileItsIoIsLentAndNotPolled() throws Exception {
        try (Fenceline fl = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            await(a.connect(b.address()));
            CallerProgress p = b.progressHere();
            await(b.close()); // b's loop is lent and never polled: its own thread takes it back to shut down
            assertEquals(0, p.progress(), "the loan ended with the worker");
            p.close();
        }
    }
}
