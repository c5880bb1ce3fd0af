package dev.fenceline.transport.ucx;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Run by {@link ExitWhileReadingTest}: a thread that was inside a put through a peer's mapping (its
 * region, and the slot of its key table that every access checks) when the runtime closed, as a
 * descheduled caller can be, touches both after the close. They must still be mapped: published
 * mappings stay as long as the process.
 */
public final class ClosedWhileMappedMain {
    private ClosedWhileMappedMain() {
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
        Worker a = f.newWorker("a").toCompletableFuture().get(30, TimeUnit.SECONDS);
        Worker b = f.newWorker("b").toCompletableFuture().get(30, TimeUnit.SECONDS);
        MemoryRegion r = b.allocate(1 << 16);
        RemoteKey k = a.unpackRemoteKey(r.remoteKey().toBytes());
        Endpoint ep = a.connect(b.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        ep.put(ByteBuffer.allocate(8), r.address(), k).toCompletableFuture().get(30, TimeUnit.SECONDS);
        if (!(k.transportCache() instanceof UcxMapping m)) {
            System.out.println("NOT MAPPED: " + k.transportCache());
            System.exit(2);
            return;
        }
        f.close();
        // Where the interrupted put goes on: the slot check, then the store.
        long slot = m.registration().getLong(0);
        m.view().putLong(8, 7);
        System.out.println("TOUCHED AFTER CLOSE " + slot + " " + m.view().getLong(8));
        System.exit(0);
    }
}
