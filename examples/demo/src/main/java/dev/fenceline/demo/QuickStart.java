package dev.fenceline.demo;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;

/** The README's example, compiled and run by a test so it never rots. */
public final class QuickStart {
    private QuickStart() {
    }

    /**
     * @param args unused
     */
    public static void main(String[] args) {
        // README-BEGIN
        // sim: the in-process transport. A service names shm or tcp, or leaves the default, auto:
        // every transport it depends on.
        try (Fenceline fenceline = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]"))) {
            Worker a = fenceline.newWorker("a").toCompletableFuture().join();
            Worker b = fenceline.newWorker("b").toCompletableFuture().join();
            MemoryRegion region = b.allocate(4096);                        // registered, remotely accessible
            byte[] packedKey = region.remoteKey().toBytes();               // send this to the peer any way you like
            Endpoint ep = a.connect(b.address()).toCompletableFuture().join();
            long base = region.address();
            var key = a.unpackRemoteKey(packedKey);
            ep.put(ByteBuffer.wrap("hello".getBytes()), base, key);       // lanes may reorder these two...
            ep.fence();                                                    // ...but not across a fence
            ep.atomicPost64(AtomicOp.ADD, base + 64, key, 42);
            long old = ep.atomicFetch64(AtomicOp.ADD, base + 64, key, 1).toCompletableFuture().join();
            ep.flush().toCompletableFuture().join();                      // everything above is visible at b
            System.out.println(old + " " + (char) region.buffer().get(0)); // prints "42 h"
        }
        // README-END
    }
}
