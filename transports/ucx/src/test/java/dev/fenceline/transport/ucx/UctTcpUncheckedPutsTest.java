package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Access;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Why UCT's tcp is opened only when {@code tcp-unchecked-writes = accept}: a bare UCT endpoint, with
 * no wireup, no key and no region of the worker's, puts bytes into memory of the worker's process
 * that the worker never registered, through the worker's own tcp iface. UCT's tcp applies a put
 * request from any connected peer at the address it names (its put protocol is handled by the
 * receiving iface whether or not this side ever puts), and nothing of the transport sees it.
 */
class UctTcpUncheckedPutsTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** By default a worker over UCT's tcp is refused, with the reason and the key that accepts it. */
    @Test
    void aWorkerOverUctTcpIsRefusedUnlessItsUncheckedWritesAreAccepted() {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [tcp]\nfenceline.transport.ucx.devices = [lo]"))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> f.newWorker("w").toCompletableFuture().get(20, TimeUnit.SECONDS));
            Throwable c = e.getCause();
            while (c != null && !(c instanceof ConfigurationException)) {
                c = c.getCause();
            }
            assertTrue(c != null, "not a configuration error: " + e);
            assertTrue(c.getMessage().contains("selects UCT's tcp")
                    && c.getMessage().contains("fenceline.transport.ucx.tcp-unchecked-writes = accept"), c.getMessage());
        }
    }

    /**
     * Accepted, a worker's tcp iface takes a put from an endpoint that never connected to the worker
     * (no CONNECT, no lane, no key of the worker's) into a buffer of this process nobody registered.
     */
    @Test
    void anyPeerOfTheTcpIfaceWritesMemoryTheWorkerNeverRegistered() throws Exception {
        Logger log = (Logger) LoggerFactory.getLogger(UcxTransport.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        log.addAppender(logged);
        Level level = log.getLevel();
        log.setLevel(Level.INFO);
        Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [tcp]\nfenceline.transport.ucx.devices = [lo]\n"
                + "fenceline.transport.ucx.tcp-unchecked-writes = accept"));
        ByteBuffer victim = ByteBuffer.allocateDirect(64);
        try (UctWorker w = UctWorker.create()) {
            Worker worker = f.newWorker("victim").toCompletableFuture().get(20, TimeUnit.SECONDS);
            UcxAddress address = UcxAddress.decode(worker.address().transportAddress("ucx"));
            UcxAddress.Iface tcp = address.ifaces().stream().filter(i -> i.transport().equals("tcp")).findFirst()
                    .orElseThrow(() -> new AssertionError("no tcp iface in " + address));
            UctResource lo = UcxAssumptions.resource("tcp", "lo");
            UctIface iface = w.open(lo, Map.of());
            ByteBuffer source = ByteBuffer.allocateDirect(64);
            source.putLong(0, 0x5757575757575757L);
            UctMemory own = iface.register(BufferUtil.address(source), source.capacity(), EnumSet.allOf(Access.class));
            long anyKey = iface.unpack(own.pack()).value();
            UctEndpoint ep = iface.connect(tcp.address());
            RecordedEvents events = new RecordedEvents();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int status;
            // NO_RESOURCE until UCT's tcp connection is up
            while ((status = ep.putZcopy(own.address(), 8, own.memoryHandle(), BufferUtil.address(victim), anyKey, 1))
                    == UctStatus.NO_RESOURCE && System.nanoTime() < deadline) {
                w.progress();
            }
            events.succeeded(w, status, 1);
            while (victim.getLong(0) == 0 && System.nanoTime() < deadline) {
                w.progress();
                Thread.onSpinWait();
            }
            assertEquals(0x5757575757575757L, victim.getLong(0),
                    "the worker's tcp iface wrote a peer's put into memory it never registered");
            assertTrue(logged.list.stream().anyMatch(e -> e.getLevel() == Level.INFO
                    && e.getFormattedMessage().startsWith("ucx victim: UCT tcp on lo writes any address")),
                    "the exposure is logged when the iface opens: " + logged.list);
        } finally {
            f.close();
            log.detachAppender(logged);
            log.setLevel(level);
        }
    }
}
