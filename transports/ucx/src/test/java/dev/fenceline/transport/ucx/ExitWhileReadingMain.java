package dev.fenceline.transport.ucx;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Run by {@link ExitWhileReadingTest}: a worker's region in memory UCT allocated, a thread reading
 * it without pause, and the JVM told to exit meanwhile (as a SIGTERM does): the runtime closes on
 * the way out while the reader still runs.
 */
public final class ExitWhileReadingMain {
    private ExitWhileReadingMain() {
    }

    /**
     * @param args none
     * @throws Exception if the runtime fails to start
     */
    public static void main(String[] args) throws Exception {
        Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx]
                fenceline.transport.ucx.tls = [posix]
                """));
        Worker w = f.newWorker("w").toCompletableFuture().get(30, TimeUnit.SECONDS);
        MemoryRegion r = w.allocate(1 << 20);
        ByteBuffer view = r.buffer();
        Thread reader = new Thread(() -> {
            long sum = 0;
            while (true) {
                for (int i = 0; i < view.capacity(); i += 4096) {
                    sum += view.get(i);
                }
                if (sum == Long.MIN_VALUE) {
                    System.out.println(sum); // keeps the reads
                }
            }
        }, "reader");
        reader.setDaemon(true);
        reader.start();
        System.out.println("READING " + f.transports());
        Thread.sleep(300);
        System.exit(0);
    }
}
