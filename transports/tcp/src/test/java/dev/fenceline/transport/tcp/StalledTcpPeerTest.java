package dev.fenceline.transport.tcp;

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
import dev.fenceline.WorkerAddress;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The target process is stopped (SIGSTOP) past the keepalive timeout with puts, posted and
 * fetching atomics and active messages outstanding on both rails; the origin fences and writes
 * again; then the target resumes and reads what waited in its socket buffers. Nothing written to a
 * socket can be taken back, so what was sent is {@link OutcomeUnknownException} and may apply when
 * the target resumes, each at most once; what waited behind the fence was never sent
 * ({@link EndpointFailedException}) and is never applied.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StalledTcpPeerTest {
    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /** 0: completed; 1: failed, not applied; 2: failed, outcome unknown. */
    private static int outcome(CompletableFuture<?> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
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
    void whatWasWrittenToAStoppedPeerIsUnknownAndWhatWaitedBehindTheFenceNeverLands() throws Exception {
        Path log = Files.createDirectories(Path.of("target", "two-process")).resolve("stall-target.log");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), StallTarget.class.getName());
        Process target = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        try (Fenceline f = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0")
                .withFallback(ConfigFactory.parseString("fenceline.endpoint.keepalive { interval = 200ms, timeout ="
                        + " 1s }\nfenceline.transport.tcp.reconnect.give-up-after = 1s")))) {
            BufferedReader out = new BufferedReader(new InputStreamReader(target.getInputStream(),
                    StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("ADDRESS ")) {
                // skip
            }
            assertTrue(line != null, "the target printed its address; its log: " + Files.readString(log));
            String[] parts = line.split(" ");
            HexFormat hex = HexFormat.of();
            Worker w = f.newWorker("stall-origin").toCompletableFuture().get(30, TimeUnit.SECONDS);
            WorkerAddress address = WorkerAddress.fromBytes(hex.parseHex(parts[1]));
            RemoteKey key = w.unpackRemoteKey(hex.parseHex(parts[2]));
            long base = key.baseAddress();
            Endpoint ep = w.connect(address).toCompletableFuture().get(30, TimeUnit.SECONDS);
            assertEquals(2, ep.lanes().size(), "two rails: " + ep.lanes());

            dev.fenceline.testkit.ProcessFaults.stop(target, java.time.Duration.ofSeconds(10));
            List<CompletableFuture<?>> puts = new ArrayList<>();
            List<CompletableFuture<?>> adds = new ArrayList<>();
            List<CompletableFuture<?>> messages = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                puts.add(ep.put(word(1), base + 8L * i, key).toCompletableFuture());
            }
            for (int i = 0; i < 3; i++) {
                adds.add(ep.atomicPost64(AtomicOp.ADD, base + StallTarget.COUNTER, key, 1).toCompletableFuture());
            }
            for (int i = 0; i < 2; i++) {
                adds.add(ep.atomicFetch64(AtomicOp.ADD, base + StallTarget.COUNTER, key, 1).toCompletableFuture());
            }
            for (int i = 0; i < 4; i++) {
                messages.add(ep.sendActiveMessage(StallTarget.MESSAGE, null, ByteBuffer.allocate(1))
                        .toCompletableFuture());
            }
            ep.fence();
            CompletableFuture<?> later = ep.put(word(2), base, key).toCompletableFuture();
            CompletableFuture<?> laterAdd = ep.atomicFetch64(AtomicOp.ADD, base + StallTarget.COUNTER, key, 100)
                    .toCompletableFuture();
            int[] putOutcome = new int[puts.size()];
            for (int i = 0; i < puts.size(); i++) {
                putOutcome[i] = outcome(puts.get(i)); // the endpoint loses both rails to keepalive
            }
            int laterOutcome = outcome(later);
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
            dev.fenceline.testkit.ProcessFaults.resume(target);
            Thread.sleep(1000); // the resumed target reads what waited in its socket buffers

            Endpoint again = w.connect(address).toCompletableFuture().get(30, TimeUnit.SECONDS);
            again.sendActiveMessage(StallTarget.REPORT, null, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
            while ((line = out.readLine()) != null && !line.startsWith("STATE ")) {
                // skip
            }
            assertTrue(line != null, "the target reported its state");
            String[] state = line.split(" ");
            long first = Long.parseLong(state[1]);
            long counter = Long.parseLong(state[2]);
            long ran = Long.parseLong(state[3]);
            System.out.printf("stopped tcp peer: puts %s, later put %d, %d ADD applied (%d sure, %d unknown), %d of 4"
                    + " messages ran (%d sure, %d unknown), first word %d%n", java.util.Arrays.toString(putOutcome),
                    laterOutcome, counter, okAdds, unknownAdds, ran, okMessages, unknownMessages, first);
            assertTrue(counter >= okAdds && counter <= okAdds + unknownAdds, "every ADD at most once, and exactly"
                    + " once where it succeeded: " + counter + " applied, " + okAdds + " succeeded, " + unknownAdds
                    + " unknown");
            assertTrue(ran >= okMessages && ran <= okMessages + unknownMessages, "each message at most once: " + ran);
            if (laterOutcome == 1) {
                assertTrue(first != 2, "the later write was reported not applied, and was not");
            }
            for (int p : putOutcome) {
                assertTrue(p == 2, "written to the stopped peer's socket: unknown, not 'not applied' (" + p + ")");
            }
        } finally {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
