package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A producer process killed between claiming a record in a worker's inbox and committing it blocks
 * that inbox for every peer until the record is skipped. The records a watched peer left are
 * skipped within ticks of its death, however many (one per thread), even when a process that started
 * meanwhile removed the dead one's segments (in a fault-matrix run the first connect to a peer forked
 * after a kill timed out so); one of a process the worker never knew after inbox-unblock-after; and
 * one of a live producer, however slow, never.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeadProducerTest {
    private static final String SHM = "fenceline.transports = [shm]\n";

    private record Writer(Process process, BufferedReader out, PrintStream in) implements AutoCloseable {
        @Override
        public void close() {
            dev.fenceline.testkit.ProcessFaults.kill(process);
        }

        void kill() {
            close();
            assertFalse(process.isAlive(), "the half-writer was killed");
        }
    }

    /** Forks a {@link HalfWriter} and waits until it holds its claims. */
    private static Writer halfWriter(Worker target, String mode, int claims) throws Exception {
        Path log = Files.createDirectories(Path.of("target", "two-process")).resolve("half-writer.log");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx128m", "-cp",
                System.getProperty("java.class.path"), HalfWriter.class.getName(),
                HexFormat.of().formatHex(target.address().toBytes()), mode, Integer.toString(claims)))
                .redirectError(log.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Writer w = new Writer(p, out, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8));
        String line = out.readLine();
        if (!"CLAIMED".equals(line)) {
            w.close();
            throw new AssertionError("the half-writer printed " + line + "; its log:\n" + Files.readString(log));
        }
        return w;
    }

    /** A put and a get of one word through {@code e}: both cross the target's inbox. */
    private static void roundTrip(Endpoint e, Worker from, MemoryRegion at, long value) throws Exception {
        var key = from.unpackRemoteKey(at.remoteKey().toBytes());
        e.put(ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, value), key.baseAddress(), key)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        ByteBuffer back = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        e.get(back, key.baseAddress(), key).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(value, back.getLong(0));
    }

    @Test
    void whatAKilledPeerLeftHalfWrittenIsSkippedAndNewPeersAreAnswered() throws Exception {
        String config = SHM + "fenceline.transport.shm.connect-timeout = 3s";
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(config))) {
            Worker target = f.newWorker("target").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion word = target.allocate(8);
            try (Writer w = halfWriter(target, "connect", 2)) {
                w.kill();
            }
            // A worker that starts now removes the dead process's segments, as a process forked after the kill does.
            try (Fenceline g = Fenceline.create(ConfigFactory.parseString(config))) {
                Worker newcomer = g.newWorker("newcomer").toCompletableFuture().get(30, TimeUnit.SECONDS);
                long start = System.nanoTime();
                Endpoint e = newcomer.connect(target.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
                roundTrip(e, newcomer, word, 42);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(ms < 3_000, "connected and answered in " + ms + " ms, under the connect-timeout");
            }
        }
    }

    @Test
    void whatAProcessNeverKnownLeftIsSkippedAfterTheUnblockDelay() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(SHM
                + "fenceline.transport.shm { connect-timeout = 10s, inbox-unblock-after = 500ms }"))) {
            Worker target = f.newWorker("target").toCompletableFuture().get(30, TimeUnit.SECONDS);
            Worker other = f.newWorker("other").toCompletableFuture().get(30, TimeUnit.SECONDS); // before the kill
            MemoryRegion word = target.allocate(8);
            try (Writer w = halfWriter(target, "unknown", 1)) {
                w.kill();
            }
            long start = System.nanoTime();
            Endpoint e = other.connect(target.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            roundTrip(e, other, word, 43);
            assertTrue(ms >= 400, "the record of a process the target never knew waited inbox-unblock-after: " + ms
                    + " ms");
        }
    }

    @Test
    void aPeerWorkerThatClosesIsNoDeathAndALiveProducersClaimIsNotSkipped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(SHM
                + "fenceline.transport.shm { connect-timeout = 20s, inbox-unblock-after = 300ms }"))) {
            Worker target = f.newWorker("target").toCompletableFuture().get(30, TimeUnit.SECONDS);
            Worker closing = f.newWorker("closing").toCompletableFuture().get(30, TimeUnit.SECONDS);
            closing.connect(target.address()).toCompletableFuture().get(30, TimeUnit.SECONDS); // watched by the target
            try (Writer w = halfWriter(target, "connect", 1)) {
                closing.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
                Thread.sleep(1_000); // ten liveness ticks: the target lets the closed worker go, and must not skip
                w.in().println("commit");
                assertEquals("COMMITTED", w.out().readLine(), "a live producer's claim was cut short by a peer's close");
            }
        }
    }

    @Test
    void aLiveProducerSlowToCommitIsNeverSkipped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(SHM
                + "fenceline.transport.shm { connect-timeout = 20s, inbox-unblock-after = 300ms }"))) {
            Worker target = f.newWorker("target").toCompletableFuture().get(30, TimeUnit.SECONDS);
            Worker other = f.newWorker("other").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion word = target.allocate(8);
            try (Writer w = halfWriter(target, "connect", 1)) {
                CompletableFuture<Endpoint> c = other.connect(target.address()).toCompletableFuture();
                // Ten liveness ticks, over three times inbox-unblock-after: the CONNECT waits behind the claim.
                assertThrows(TimeoutException.class, () -> c.get(1, TimeUnit.SECONDS));
                w.in().println("commit");
                assertEquals("COMMITTED", w.out().readLine(), "the slow producer's commit was not cut short");
                Endpoint e = c.get(20, TimeUnit.SECONDS);
                assertNotNull(e);
                roundTrip(e, other, word, 44);
            }
        }
    }
}
