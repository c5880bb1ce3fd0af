package dev.fenceline.transport.shm;

import dev.fenceline.testkit.process.PeerWorker;
import dev.fenceline.testkit.process.PeerWorkerProcess;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The target process is stopped (SIGSTOP) past the keepalive timeout while puts, posted and
 * fetching atomics and active messages wait in its inbox; the origin fences and writes again; then
 * the target resumes. Its regions are registered memory, so everything goes through its inbox (the
 * ring lane) or cross-memory attach (the cma lane, which works on a stopped process). The ring
 * lane's gate lets the origin withdraw what the target had not taken: nothing stale is applied when
 * it resumes, no atomic or message runs twice, and each outcome says the truth.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StalledPeerTest {
    private static final String SHM = "fenceline.transports = [shm]";
    private static ByteBuffer word(long v) {
        return ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /** 0: completed; 1: failed, not applied; 2: failed, outcome unknown. */
    private static int outcome(CompletableFuture<?> f) throws Exception {
        try {
            f.get(20, TimeUnit.SECONDS);
            return 0;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof OutcomeUnknownException) {
                return 2;
            }
            assertTrue(e.getCause() instanceof EndpointFailedException, "a typed failure: " + e.getCause());
            return 1;
        }
    }

    @Test
    void whatAStoppedPeerHadNotTakenIsWithdrawnAndNeverApplied() throws Exception {
        Path logs = Files.createDirectories(Path.of("target", "two-process"));
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.endpoint.keepalive { interval = 200ms, timeout = 1s }
                """));
                PeerWorkerProcess peer = PeerWorkerProcess.fork(logs.resolve("stalled.log"), SHM,
                        "registered")) {
            Worker w = f.newWorker("origin").toCompletableFuture().get(30, TimeUnit.SECONDS);
            RemoteKey data = w.unpackRemoteKey(peer.dataKey());
            RemoteKey counters = w.unpackRemoteKey(peer.counterKey());
            Endpoint ep = w.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
            assertEquals(2, ep.lanes().size(), "a ring lane and a cma lane: " + ep.lanes());
            ep.put(word(7), data.baseAddress() + 64, data).toCompletableFuture().get(10, TimeUnit.SECONDS);

            dev.fenceline.testkit.ProcessFaults.stop(peer.process(), java.time.Duration.ofSeconds(10));
            List<CompletableFuture<?>> puts = new ArrayList<>();
            List<CompletableFuture<?>> adds = new ArrayList<>();
            List<CompletableFuture<?>> messages = new ArrayList<>();
            puts.add(ep.put(word(1), data.baseAddress(), data).toCompletableFuture());
            for (int i = 1; i < 4; i++) {
                puts.add(ep.put(word(i), data.baseAddress() + 8L * i, data).toCompletableFuture());
            }
            for (int i = 0; i < 3; i++) {
                adds.add(ep.atomicPost64(AtomicOp.ADD, counters.baseAddress(), counters, 1).toCompletableFuture());
            }
            for (int i = 0; i < 2; i++) {
                adds.add(ep.atomicFetch64(AtomicOp.ADD, counters.baseAddress(), counters, 1).toCompletableFuture());
            }
            for (int i = 0; i < 4; i++) {
                messages.add(ep.sendActiveMessage(PeerWorker.MESSAGE, null, ByteBuffer.allocate(1)).toCompletableFuture());
            }
            ep.fence();
            CompletableFuture<?> later = ep.put(word(2), data.baseAddress(), data).toCompletableFuture();
            CompletableFuture<?> laterAdd = ep.atomicFetch64(AtomicOp.ADD, counters.baseAddress(), counters, 100)
                    .toCompletableFuture();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ep.lanes().get(0).live()) { // the peer's heartbeat stands still: the watcher fails the ring lane
                assertTrue(System.nanoTime() < deadline, "keepalive never gave the stopped peer's lane up");
                Thread.sleep(50);
            }
            int[] putOutcome = new int[puts.size()];
            for (int i = 0; i < puts.size(); i++) {
                putOutcome[i] = outcome(puts.get(i));
            }
            int laterOutcome = outcome(later);
            dev.fenceline.testkit.ProcessFaults.resume(peer.process());
            long okAdds = 0;
            long unknownAdds = 0;
            for (CompletableFuture<?> a : adds) {
                int o = outcome(a);
                okAdds += o == 0 ? 1 : 0;
                unknownAdds += o == 2 ? 1 : 0;
            }
            int o = outcome(laterAdd);
            okAdds += o == 0 ? 100 : 0;
            unknownAdds += o == 2 ? 100 : 0;
            long okMessages = 0;
            long unknownMessages = 0;
            for (CompletableFuture<?> m : messages) {
                int x = outcome(m);
                okMessages += x == 0 ? 1 : 0;
                unknownMessages += x == 2 ? 1 : 0;
            }
            Thread.sleep(1000); // the resumed peer takes whatever still waits in its inbox (it must skip it)

            // A new endpoint, to ask the resumed peer what it holds.
            Endpoint again = w.connect(peer.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
            again.sendActiveMessage(PeerWorker.REPORT, null, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
            String line;
            while ((line = peer.out().readLine()) != null && !line.startsWith("STATE ")) {
                // skip
            }
            assertTrue(line != null, "the peer reported its state");
            String[] state = line.split(" ");
            long first = Long.parseLong(state[1]);
            long counter = Long.parseLong(state[2]);
            long ran = Long.parseLong(state[3]);
            System.out.printf("stopped peer: puts %s, later put %d, %d ADD applied (%d sure, %d unknown), %d of 4"
                    + " messages ran (%d sure, %d unknown), first word %d%n", java.util.Arrays.toString(putOutcome),
                    laterOutcome, counter, okAdds, unknownAdds, ran, okMessages, unknownMessages, first);
            assertTrue(counter >= okAdds && counter <= okAdds + unknownAdds, "every ADD at most once, and exactly"
                    + " once where it succeeded: " + counter + " applied, " + okAdds + " succeeded, " + unknownAdds
                    + " unknown");
            assertTrue(ran >= okMessages && ran <= okMessages + unknownMessages, "each message at most once: " + ran);
            if (laterOutcome == 0) {
                assertEquals(2, first, "the fenced later write is what remains: no stale copy landed after it");
            } else if (putOutcome[0] == 0) {
                assertEquals(1, first);
            }
            assertEquals(0, laterOutcome, "the later write went again over the cma lane");
            assertEquals(0, putOutcome[0], "so did the first");
        }
    }
}
