package com.example.sequence;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.PrintStream;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** Two nodes in one process over TCP on loopback: the host of the counter and a client. */
public final class Main {
    private Main() {
    }

    /**
     * @param out where to print the numbers
     * @param count how many numbers the client takes
     * @return the numbers' sum, as a check
     * @throws Exception if a node does not start or a number does not come
     */
    public static long run(PrintStream out, int count) throws Exception {
        Config config = ConfigFactory.load();
        if (config.getString("fenceline.transport.tcp.secret").isEmpty()) {
            // One process only: a fresh secret. A cluster sets FENCELINE_TCP_SECRET on every node.
            byte[] secret = new byte[16];
            new SecureRandom().nextBytes(secret);
            config = ConfigFactory.parseString("fenceline.transport.tcp.secret = \"" + HexFormat.of().formatHex(secret)
                    + "\"").withFallback(config);
        }
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "sequence", config);
        try (SequenceService host = SequenceService.start(system, "host").toCompletableFuture().get(30, TimeUnit.SECONDS);
                SequenceService client = SequenceService.start(system, "client").toCompletableFuture()
                        .get(30, TimeUnit.SECONDS)) {
            byte[] key = host.hostCounter();
            SequenceService.Sequence seq = client.connect(host.address(), host.counterAddress(), key)
                    .toCompletableFuture().get(30, TimeUnit.SECONDS);
            long sum = 0;
            for (int i = 0; i < count; i++) {
                long n = seq.next().toCompletableFuture().get(30, TimeUnit.SECONDS);
                out.println("number " + n);
                sum += n;
            }
            return sum;
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * @param args ignored
     * @throws Exception if the run fails
     */
    public static void main(String[] args) throws Exception {
        run(System.out, 5);
    }
}
