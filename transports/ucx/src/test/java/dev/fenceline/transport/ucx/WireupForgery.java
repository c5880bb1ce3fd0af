package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * Workers a and c connected both ways, c able to send wireup messages of the test's making:
 * from c's agent thread (which alone may touch UCT), on c's channel to a, in a handler of c's.
 * Handlers 1 (nothing), 2 (the test's) and 9 (the forgery's) are taken.
 */
record WireupForgery(Worker a, Worker c, Endpoint ca, Endpoint ac, UcxLane lane,
        AtomicReference<UcxWireup.Message[]> forged, AtomicReference<Throwable> failed) {
    static WireupForgery open(Fenceline f) throws Exception {
        Worker a = await(f.newWorker("a"));
        Worker c = await(f.newWorker("c"));
        a.setActiveMessageHandler(1, (h, p) -> { });
        c.setActiveMessageHandler(1, (h, p) -> { });
        Endpoint ca = await(c.connect(a.address()));
        Endpoint ac = await(a.connect(c.address()));
        await(ca.sendActiveMessage(1, null, null));
        UcxLane lane = UcxLane.byId(ca.lanes().get(0).connectionId());
        assertTrue(lane != null, "c's UCT lane to a is live");
        WireupForgery g = new WireupForgery(a, c, ca, ac, lane, new AtomicReference<>(), new AtomicReference<>());
        UcxWiring wiring = wiring(lane);
        java.lang.reflect.Method send = UcxWiring.class.getDeclaredMethod("send", UcxChannel.class,
                UcxWireup.Message.class);
        send.setAccessible(true);
        c.setActiveMessageHandler(9, (h, p) -> {
            try {
                for (UcxWireup.Message m : g.forged.get()) {
                    send.invoke(wiring, lane.channel, m);
                }
            } catch (ReflectiveOperationException e) {
                g.failed.set(e);
            }
        });
        return g;
    }

    /** @return c's channel to a, which the messages go on */
    UcxChannel toA() {
        return lane.channel;
    }

    /** Has c send these to a, and returns once a has read them (behind them, c's next message). */
    void send(UcxWireup.Message... messages) throws Exception {
        forged.set(messages);
        await(ac.sendActiveMessage(9, null, null));
        assertTrue(failed.get() == null, String.valueOf(failed.get()));
        await(ca.sendActiveMessage(1, null, null));
    }

    /**
     * @param query what to read of a's wiring
     * @return its answer, read on a's agent thread (which alone may touch the wiring), in handler 2
     */
    <T> T atA(Function<UcxWiring, T> query) throws Exception {
        UcxLane aLane = UcxLane.byId(ac.lanes().get(0).connectionId());
        assertTrue(aLane != null, "a's UCT lane to c is live");
        UcxWiring atA = wiring(aLane);
        AtomicReference<T> answer = new AtomicReference<>();
        a.setActiveMessageHandler(2, (h, p) -> answer.set(query.apply(atA)));
        await(ca.sendActiveMessage(2, null, null));
        return answer.get();
    }

    /** @return the wiring of a lane's worker (its agent's) */
    static UcxWiring wiring(UcxLane lane) throws ReflectiveOperationException {
        java.lang.reflect.Field agentField = UcxLane.class.getDeclaredField("agent");
        agentField.setAccessible(true);
        java.lang.reflect.Field wiringField = UcxAgent.class.getDeclaredField("wiring");
        wiringField.setAccessible(true);
        return (UcxWiring) wiringField.get(agentField.get(lane));
    }

    /** @return the UCT endpoints a wiring's acceptor made for peers' channels so far (its agent thread) */
    static long channelsMade(UcxWiring w) {
        try {
            java.lang.reflect.Field f = UcxWiring.class.getDeclaredField("acceptor");
            f.setAccessible(true);
            return ((UcxAcceptor) f.get(w)).channelsMade();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** @return a Fenceline of UCT posix only, whose keepalive gives up after 60 s (no test waits that long) */
    static Fenceline posix() {
        return Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [posix]\n"
                + "fenceline.endpoint.keepalive.timeout = 60s"));
    }

    static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
}
