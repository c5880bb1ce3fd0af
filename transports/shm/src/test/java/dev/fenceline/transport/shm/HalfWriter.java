package dev.fenceline.transport.shm;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * A producer process for {@link DeadProducerTest}: a worker of its own (so its segments are in the
 * directory), optionally connected to the target worker (so the target watches this process), that
 * claims records in the target's inbox and does not commit them until told to. Arguments: the
 * target's address (hex), {@code connect} or {@code unknown}, how many records to claim. Prints
 * {@code CLAIMED}; on the input line {@code commit} commits them and prints {@code COMMITTED} or
 * {@code SKIPPED <why>}; serves until its input closes or it is killed.
 */
public final class HalfWriter {
    private HalfWriter() {
    }

    /**
     * @param args see the class comment
     * @throws Exception if it cannot do its part
     */
    public static void main(String[] args) throws Exception {
        WorkerAddress target = WorkerAddress.fromBytes(HexFormat.of().parseHex(args[0]));
        int claims = Integer.parseInt(args[2]);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]")
                .withFallback(ConfigFactory.load()))) {
            Worker w = f.newWorker("half-writer").toCompletableFuture().get(30, TimeUnit.SECONDS);
            if (args[1].equals("connect")) {
                w.connect(target).toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
            String control = ShmAddress.decode(target.transportAddress("shm")).control();
            ManyToOneRingBuffer ring = Inbox.open(Path.of("/dev/shm", control), true).ring;
            List<Integer> claimed = new ArrayList<>();
            for (int i = 0; i < claims; i++) {
                int at = ring.tryClaim(ShmWire.BYE, 8);
                if (at < 0) {
                    throw new IllegalStateException("no room in the target's inbox");
                }
                ring.buffer().putLong(at, 0); // a BYE for no connection: harmless once committed
                claimed.add(at);
            }
            System.out.println("CLAIMED");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null;) {
                if (line.equals("commit")) {
                    try {
                        claimed.forEach(ring::commit);
                        System.out.println("COMMITTED");
                    } catch (IllegalStateException e) {
                        System.out.println("SKIPPED " + e.getMessage());
                    }
                    System.out.flush();
                }
            }
        }
    }
}
