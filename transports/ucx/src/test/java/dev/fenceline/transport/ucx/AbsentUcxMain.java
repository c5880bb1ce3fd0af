package dev.fenceline.transport.ucx;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Run by {@link AbsentUcxTest} in a JVM whose ucx jar has no native library: prints why UCX is not
 * available, which transports the runtime took, and whether a put over them landed.
 */
public final class AbsentUcxMain {
    private AbsentUcxMain() {
    }

    /**
     * @param args none
     * @throws Exception if the runtime fails
     */
    public static void main(String[] args) throws Exception {
        System.out.println("CAUSE " + new UcxTransportProvider().unavailabilityCause());
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx, tcp]
                fenceline.transport.tcp.listen = ["127.0.0.1:0"]
                fenceline.transport.tcp.secret = "0123456789abcdef0123456789abcdef"
                """))) {
            System.out.println("TRANSPORTS " + f.transports());
            Worker a = f.newWorker("a").toCompletableFuture().get(30, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion r = b.allocate(4096);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
            ep.put(ByteBuffer.wrap(new byte[] {42}), r.address(), a.unpackRemoteKey(r.remoteKey().toBytes()))
                    .toCompletableFuture().get(30, TimeUnit.SECONDS);
            System.out.println("PUT " + r.buffer().get(0) + " over " + ep.lanes().get(0).transport());
        }
        try {
            Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]")).close();
            System.out.println("ALONE started");
        } catch (dev.fenceline.ConfigurationException e) {
            System.out.println("ALONE " + e.getMessage());
        }
    }
}
