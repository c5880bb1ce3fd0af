package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Fenceline;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reply that answers no request a live lane waits for (an ACK to an operation it does not hold, a
 * FLUSHED to no flush it sent, an answer to a direct message that is not its oldest, or one of a type
 * a direct message is never answered with) breaks the
 * protocol: the lane fails, and the reply counts for nothing (were it counted, the lane would take a
 * request still unanswered for answered, and let a hardware operation overtake it or a flush end
 * before it). Worker c sends such a reply to a's lane from its progress thread; an honest reply is
 * the control.
 */
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxForgedRepliesTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @ParameterizedTest
    @ValueSource(strings = {"ACK to an operation never sent", "FLUSHED to no flush", "answer to no direct message",
        "none"})
    void aReplyToNothingTheLaneWaitsForFailsIt(String forgery) throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            UcxLane aLane = liveLane(g);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            UnsafeBuffer reply = new UnsafeBuffer(BufferUtil.allocateDirectAligned(64, 8));
            g.c().setActiveMessageHandler(8, (h, p) -> {
                try {
                    reply.setMemory(0, 64, (byte) 0);
                    reply.putLong(UcxWire.CONN, aLane.conn);
                    switch (forgery) {
                        case "ACK to an operation never sent" -> {
                            reply.putLong(UcxWire.TOKEN, 0x1234_5678L);
                            reply.putByte(UcxWire.REPLY_TYPE, UcxWire.ACK);
                        }
                        case "FLUSHED to no flush" -> {
                            reply.putLong(UcxWire.TOKEN, 0x1234_5679L);
                            reply.putByte(UcxWire.REPLY_TYPE, UcxWire.FLUSHED);
                        }
                        case "answer to no direct message" -> {
                            reply.putLong(UcxWire.TOKEN, UcxLane.DIRECT | 0x7777L);
                            reply.putByte(UcxWire.REPLY_TYPE, UcxWire.ACK);
                        }
                        default -> {
                            return; // the control: c sends nothing of its own
                        }
                    }
                    assertEquals(UcxSender.Sent.SENT, sender(g).trySend(g.toA(), UcxWire.AM_REPLY, reply,
                            UcxWire.REPLY_HEADER));
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            Throwable outcome = null;
            try {
                WireupForgery.await(g.ac().sendActiveMessage(8, null, null));
            } catch (java.util.concurrent.ExecutionException e) {
                outcome = e.getCause();
            }
            assertTrue(failed.get() == null, String.valueOf(failed.get()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            boolean forged = !forgery.equals("none");
            while (forged && aLane.isLive() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(!forged, aLane.isLive(), forgery);
            if (forged) {
                // The forged reply came before the message's own answer, on the same connection: the
                // message's outcome is unknown, for the reason the lane failed
                String why = switch (forgery) {
                    case "ACK to an operation never sent" -> "to operation 305419896, which is not unanswered";
                    case "FLUSHED to no flush" -> "FLUSHED for 305419897, which is not the oldest flush unanswered";
                    default -> "which is not the oldest one unanswered";
                };
                assertTrue(outcome instanceof dev.fenceline.OutcomeUnknownException
                        && String.valueOf(outcome.getMessage()).contains(why), String.valueOf(outcome));
            } else { // an honest lane goes on: a put and a flush over it
                assertTrue(outcome == null, String.valueOf(outcome));
                ByteBuffer eight = ByteBuffer.allocateDirect(8);
                dev.fenceline.MemoryRegion region = g.c().allocate(64);
                WireupForgery.await(g.ac().put(eight, region.address(),
                        g.a().unpackRemoteKey(region.remoteKey().toBytes())));
                WireupForgery.await(g.ac().flush());
                assertTrue(aLane.isLive());
            }
        }
    }

    /**
     * A get is answered with its bytes (DATA) or refused (NACK). An ACK naming a get in flight would
     * leave its buffer unwritten: the get fails, naming the reply, and never reports success. c's
     * handler holds c's progress thread while a's get to c's registered memory (a software request
     * over posix) goes out, then answers it with an ACK before c's target reads it.
     */
    @org.junit.jupiter.api.Test
    void anAckToAGetFailsTheGet() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            UcxLane aLane = liveLane(g);
            dev.fenceline.MemoryRegion region = g.c().register(ByteBuffer.allocateDirect(64));
            dev.fenceline.RemoteKey key = g.a().unpackRemoteKey(region.remoteKey().toBytes());
            AtomicReference<Throwable> failed = new AtomicReference<>();
            UnsafeBuffer reply = new UnsafeBuffer(BufferUtil.allocateDirectAligned(64, 8));
            g.c().setActiveMessageHandler(9, (h, p) -> {
                try {
                    forge(g, aLane, reply, sentGet(aLane, System.nanoTime() + TimeUnit.SECONDS.toNanos(10)), UcxWire.ACK);
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            ByteBuffer into = ByteBuffer.allocateDirect(8);
            g.ac().sendActiveMessage(9, null, null); // its outcome is not what this test reads
            java.util.concurrent.CompletableFuture<Void> get = g.ac().get(into, region.address(), key)
                    .toCompletableFuture();
            Throwable outcome = null;
            try {
                get.get(20, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                outcome = e.getCause();
            }
            assertTrue(failed.get() == null, String.valueOf(failed.get()));
            assertTrue(outcome instanceof dev.fenceline.FencelineException
                    && String.valueOf(outcome.getMessage()).contains("an ACK without data"), String.valueOf(outcome));
        }
    }

    /**
     * A direct active message is answered with an ACK or a NACK. A DATA reply naming the oldest one
     * waiting would have counted as its success: the lane fails instead. c's handler answers a's
     * message (an implicit one, a calling thread's, numbered on the lane) before c's target does.
     */
    @org.junit.jupiter.api.Test
    void aDirectMessageAnsweredWithDataFailsTheLane() throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            UcxLane aLane = liveLane(g);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong forgedFor = new java.util.concurrent.atomic.AtomicLong();
            UnsafeBuffer reply = new UnsafeBuffer(BufferUtil.allocateDirectAligned(64, 8));
            // Until the endpoint's grant is on the lane, a message goes through its actor, not directly:
            // a message (to a handler that does nothing) and a flush, until one went directly.
            g.c().setActiveMessageHandler(7, (h, p) -> { });
            long direct = g.a().statistics().direct();
            for (int i = 0; i < 50 && g.a().statistics().direct() == direct; i++) {
                g.ac().sendActiveMessageImplicit(7, ByteBuffer.allocate(0), ByteBuffer.allocate(0));
                g.ac().flush().toCompletableFuture().get(20, TimeUnit.SECONDS);
            }
            assertTrue(g.a().statistics().direct() > direct, "no message went directly: " + g.a().statistics());
            g.c().setActiveMessageHandler(8, (h, p) -> {
                try {
                    forgedFor.set(oldestDirect(aLane));
                    forge(g, aLane, reply, forgedFor.get(), UcxWire.DATA);
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            g.ac().sendActiveMessageImplicit(8, ByteBuffer.allocate(0), ByteBuffer.allocate(0));
            // The flush's outcome is either: c's own ACK may still reach the message before the
            // endpoint takes the failed lane's messages back
            g.ac().flush().toCompletableFuture().handle((v, e) -> null).get(20, TimeUnit.SECONDS);
            assertTrue(failed.get() == null, String.valueOf(failed.get()));
            assertTrue(forgedFor.get() < 0, "the message went on the lane, numbered: " + forgedFor.get());
            // The DATA failed the lane; had it counted as the answer, c's ACK would have failed it later,
            // as an answer to no message
            Throwable why = laneFailure(aLane, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
            assertTrue(String.valueOf(why).contains("which is answered with an ACK or a NACK only"), String.valueOf(why));
        }
    }

    /** Sends a's lane a reply of c's making, from c's progress thread (where c's handlers run). */
    /** @return a's lane to c, checked live: the lane the forged replies name */
    private static UcxLane liveLane(WireupForgery g) {
        UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
        assertTrue(aLane != null && aLane.isLive(), "a's lane to c is live");
        return aLane;
    }

    private static void forge(WireupForgery g, UcxLane aLane, UnsafeBuffer reply, long token, byte type)
            throws ReflectiveOperationException {
        reply.setMemory(0, 64, (byte) 0);
        reply.putLong(UcxWire.CONN, aLane.conn);
        reply.putLong(UcxWire.TOKEN, token);
        reply.putByte(UcxWire.REPLY_TYPE, type);
        assertEquals(UcxSender.Sent.SENT, sender(g).trySend(g.toA(), UcxWire.AM_REPLY, reply, UcxWire.REPLY_HEADER));
    }

    /** @return a private field's value, read by reflection */
    private static Object field(Class<?> declaring, String name, Object of) throws ReflectiveOperationException {
        java.lang.reflect.Field f = declaring.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(of);
    }

    /** @return why the lane failed, once it has (AbstractLane keeps the first cause it reported) */
    private static Throwable laneFailure(UcxLane lane, long deadline) throws ReflectiveOperationException {
        while (System.nanoTime() < deadline) {
            Throwable t = (Throwable) field(dev.fenceline.spi.support.AbstractLane.class, "failure", lane);
            if (t != null) {
                return t;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("the lane did not fail within 10 s");
    }

    /** @return the token of a's oldest direct message unanswered (read from c's progress thread) */
    private static long oldestDirect(UcxLane lane) throws ReflectiveOperationException {
        synchronized (lane.ledger) {
            java.util.ArrayDeque<?> queue = (java.util.ArrayDeque<?>) field(UcxDirectMessages.class, "queue",
                    field(UcxLaneLedger.class, "directs", lane.ledger));
            UcxOp oldest = (UcxOp) queue.peekFirst();
            if (oldest == null) {
                throw new AssertionError("a's message is not waiting on the lane");
            }
            return oldest.token;
        }
    }

    /** @return the token of a's get once a's agent has sent it (polled from c's progress thread) */
    @SuppressWarnings("unchecked") // the ledger's private map, read here by reflection
    private static long sentGet(UcxLane lane, long deadline) throws ReflectiveOperationException {
        while (System.nanoTime() < deadline) {
            synchronized (lane.ledger) {
                for (UcxOp op : ((org.agrona.collections.Long2ObjectHashMap<UcxOp>) field(UcxLaneLedger.class, "ops",
                        lane.ledger)).values()) {
                    if (op.kind == UcxOp.Kind.GET && op.state == UcxOp.State.SENT) {
                        return op.token;
                    }
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("a's get was not sent within 10 s");
    }

    /** @return c's sender, which its progress thread alone uses (the handler runs there) */
    private static UcxSender sender(WireupForgery g) throws ReflectiveOperationException {
        return (UcxSender) field(UcxAgent.class, "sender", field(UcxLane.class, "agent", g.lane()));
    }
}
