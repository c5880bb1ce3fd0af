package dev.fenceline.transport.tcp;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The target process of {@link StalledTcpPeerTest}: a tcp worker on two loopback rails with a
 * region, which counts active messages (id 1) and on a REPORT message (id 4) prints
 * {@code STATE <first word> <counter word> <messages>}. It prints its address and the region's key.
 */
final class StallTarget {
    static final int MESSAGE = 1;
    static final int REPORT = 4;
    static final int COUNTER = 1024;

    private StallTarget() {
    }

    public static void main(String[] args) throws Exception {
        try (Fenceline f = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0")
                .withFallback(ConfigFactory.load()))) {
            Worker w = f.newWorker("stall-target").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion region = w.allocate(4096);
            AtomicLong messages = new AtomicLong();
            w.setActiveMessageHandler(MESSAGE, (h, p) -> messages.incrementAndGet());
            w.setActiveMessageHandler(REPORT, (h, p) -> {
                java.nio.ByteBuffer m = region.buffer().order(ByteOrder.nativeOrder());
                System.out.println("STATE " + m.getLong(0) + " " + m.getLong(COUNTER) + " " + messages.get());
                System.out.flush();
            });
            HexFormat hex = HexFormat.of();
            System.out.println("ADDRESS " + hex.formatHex(w.address().toBytes()) + " "
                    + hex.formatHex(region.remoteKey().toBytes()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the test closes stdin or kills this process
            }
        }
    }
}
