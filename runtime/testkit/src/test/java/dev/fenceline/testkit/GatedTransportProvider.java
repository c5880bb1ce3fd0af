package dev.fenceline.testkit;

import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;
import dev.fenceline.transport.sim.SimTransportProvider;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The sim transport behind a gate: a worker's start waits in {@link #create} until the test opens
 * it, so a test can close the runtime while a worker starts.
 */
public final class GatedTransportProvider implements TransportProvider {
    /** Its name. */
    static final String NAME = "gated";
    /** Counted down when a create waits at the gate. */
    static volatile CountDownLatch entered = new CountDownLatch(1);
    /** Opened by the test. */
    static volatile CountDownLatch gate = new CountDownLatch(1);
    /** Offered only while a test arms it: otherwise {@code transports = auto} would pick it elsewhere. */
    private static volatile boolean armed;

    /** Offers the transport, with a closed gate. */
    static void arm() {
        entered = new CountDownLatch(1);
        gate = new CountDownLatch(1);
        armed = true;
    }

    /** Withdraws it, and opens the gate for whatever still waits. */
    static void disarm() {
        armed = false;
        gate.countDown();
    }

    /** For {@link java.util.ServiceLoader}. */
    public GatedTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailabilityCause() {
        return armed ? null : "offered only to the test that arms it";
    }

    @Override
    public Transport create(TransportContext context) {
        entered.countDown();
        try {
            if (!gate.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at the gate", e);
        }
        // The sim's own defaults (it reads its keys from the context's section, here gated's, empty).
        com.typesafe.config.Config sim = context.config().withFallback(
                com.typesafe.config.ConfigFactory.defaultReference().getConfig("fenceline.transport.sim"));
        return new SimTransportProvider().create(new TransportContext(context.workerId(), context.workerName(), sim,
                context.target(), context.windows(), context.livenessTimeout()));
    }
}
