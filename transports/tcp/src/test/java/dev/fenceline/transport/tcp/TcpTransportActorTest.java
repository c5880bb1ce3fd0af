package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneConnection;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The transport's control actor: connects that overlap each get their own rails' lanes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpTransportActorTest {
    private static final ActorTestKit KIT = ActorTestKit.create(ConfigFactory.parseString(
            "pekko.log-dead-letters = off"));
    private final Map<InetSocketAddress, CompletableFuture<TcpLane>> attempts = new ConcurrentHashMap<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final TcpSettings settings;

    TcpTransportActorTest() {
        Config section = ConfigFactory.parseString("secret = \"" + TcpConfigs.SECRET + "\"")
                .withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
        settings = TcpSettings.fromSection(section);
    }

    private final RailActor.Connector connector = new RailActor.Connector() {
        @Override
        public CompletableFuture<TcpLane> open(Rail rail) {
            CompletableFuture<TcpLane> f = new CompletableFuture<>();
            attempts.put(rail.remote(), f);
            return f;
        }

        @Override
        public boolean closed() {
            return false;
        }

        @Override
        public String workerName() {
            return "actor-test";
        }
    };

    @AfterEach
    void tearDown() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @AfterAll
    static void shutdown() {
        KIT.shutdownTestKit();
    }

    private CompletableFuture<TcpLane> attempt(InetSocketAddress remote) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!attempts.containsKey(remote) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        CompletableFuture<TcpLane> f = attempts.get(remote);
        assertNotNull(f, "no attempt to " + remote);
        return f;
    }

    private TcpLane laneTo(InetSocketAddress remote) {
        EmbeddedChannel ch = new EmbeddedChannel();
        channels.add(ch);
        return new TcpLane(new Rail(0, null, remote, UUID.randomUUID()), ch, settings, settings.maxFragment());
    }

    @Test
    void overlappingConnectsEachGetTheirOwnRails() throws Exception {
        ActorRef<TcpTransportActor.Command> actor = KIT.spawn(TcpTransportActor.create(connector, r -> null,
                settings.reconnectPolicy(), Duration.ofSeconds(30)));
        InetSocketAddress a0 = new InetSocketAddress("127.0.0.1", 1001);
        InetSocketAddress a1 = new InetSocketAddress("127.0.0.2", 1002);
        InetSocketAddress b0 = new InetSocketAddress("127.0.0.3", 1003);
        CompletableFuture<List<LaneConnection>> first = new CompletableFuture<>();
        CompletableFuture<List<LaneConnection>> second = new CompletableFuture<>();
        actor.tell(new TcpTransportActor.Connect(UUID.randomUUID(), List.of(a0, a1), first));
        actor.tell(new TcpTransportActor.Connect(UUID.randomUUID(), List.of(b0), second));
        TcpLane lb = laneTo(b0);
        attempt(b0).complete(lb); // the later connect's rail answers first
        TcpLane la1 = laneTo(a1);
        attempt(a1).complete(la1);
        assertEquals(List.of(lb), second.get(10, TimeUnit.SECONDS));
        assertFalse(first.isDone(), "the first connect still waits for its rail 0");
        attempt(a0).completeExceptionally(new EndpointFailedException("connection refused"));
        assertEquals(List.of(la1), first.get(10, TimeUnit.SECONDS), "rail 1 up, rail 0 left out");
    }

    @Test
    void aConnectWhoseRailsAllFailFailsNamingEachAndTheTransportClosingFailsTheRest() throws Exception {
        ActorRef<TcpTransportActor.Command> actor = KIT.spawn(TcpTransportActor.create(connector, r -> null,
                settings.reconnectPolicy(), Duration.ofSeconds(30)));
        InetSocketAddress c0 = new InetSocketAddress("127.0.0.4", 1004);
        CompletableFuture<List<LaneConnection>> down = new CompletableFuture<>();
        actor.tell(new TcpTransportActor.Connect(UUID.randomUUID(), List.of(c0), down));
        attempt(c0).completeExceptionally(new EndpointFailedException("no route to host"));
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> down.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains(c0 + ": no route to host"), e.getCause().getMessage());

        InetSocketAddress d0 = new InetSocketAddress("127.0.0.5", 1005);
        CompletableFuture<List<LaneConnection>> waiting = new CompletableFuture<>();
        actor.tell(new TcpTransportActor.Connect(UUID.randomUUID(), List.of(d0), waiting));
        attempt(d0);
        actor.tell(TcpTransportActor.Shutdown.INSTANCE);
        ExecutionException closed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> waiting.get(10, TimeUnit.SECONDS));
        assertTrue(closed.getCause().getMessage().contains("transport closed"), closed.getCause().getMessage());
    }
}
