package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.FencelineException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer's ring is its own memory, its size the peer's choice: every message this side writes there
 * must fit the ring's largest message (an eighth of it), or Agrona refuses the claim by throwing on
 * the thread that writes. A ring smaller than any worker makes is refused; a get's data is bounded
 * by the origin's ring; a lane's messages by the target's ring, whatever its CONNECTED claims.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerRingBoundsTest {
    @Test
    void aControlSegmentWithARingSmallerThanAnyWorkerMakesIsRefused() throws Exception {
        Path file = Path.of("/dev/shm", Segments.processPrefix() + "0fa4e001-" + Segments.unguessable() + "-ctl");
        Inbox.create(file, 256, 1, 1, UUID.randomUUID(), true); // its largest message: 32 bytes
        try {
            FencelineException e = assertThrows(FencelineException.class, () -> Inbox.open(file, true));
            assertTrue(e.getMessage().contains("a ring of 256 bytes") && e.getMessage().contains("65536"),
                    e.getMessage());
        } finally {
            Segments.remove(file);
        }
    }

    /**
     * An origin whose ring takes messages of at most 8 KiB asks for 100 KiB (within the target's
     * max-fragment): the target answers with a NACK naming the limit, instead of throwing on its
     * polling thread with the data in hand, and goes on serving; a get that fits gets its data.
     */
    @Test
    void aGetLargerThanTheOriginsRingTakesIsRefusedNamingTheLimit() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = FakeShmPeer.worker(f, "a");
            Worker b = FakeShmPeer.worker(f, "b");
            MemoryRegion region = b.register(ByteBuffer.allocateDirect(128 << 10));
            RemoteKey key = region.remoteKey();
            long conn = fake.connect(b);
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.GET,
                    FakeShmPeer.get(conn, 7, key.keyId(), key.baseAddress(), 100 << 10));
            FakeShmPeer.Message answer = fake.await(m -> m.getLong(ShmWire.TOKEN) == 7, "an answer to the GET");
            assertEquals(ShmWire.NACK, answer.type(), "answered with a " + ShmWire.name(answer.type()));
            int limit = (64 << 10) / 8 - 16;
            assertTrue(answer.text(20).contains("over the limit of " + limit), answer.text(20));

            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.GET,
                    FakeShmPeer.get(conn, 8, key.keyId(), key.baseAddress(), limit));
            FakeShmPeer.Message data = fake.await(m -> m.getLong(ShmWire.TOKEN) == 8, "an answer to the second GET");
            assertEquals(ShmWire.GET_DATA, data.type(), "answered with a " + ShmWire.name(data.type()));
            assertEquals(16 + limit, data.bytes().length);

            FakeShmPeer.assertServes(a, b);
        }
    }

    /**
     * A target whose ring takes messages of at most 8 KiB answers CONNECTED claiming 1 MiB: the lane
     * still refuses an active message its ring cannot take, with a typed error naming the limit, and
     * sends one that fits.
     */
    @Test
    void aTargetsRingBoundsTheLanesMessagesWhateverItsConnectedClaims() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = FakeShmPeer.worker(f, "a");
            Endpoint ep = fake.accept(a, 1 << 20).endpoint(); // a limit far past what its ring takes

            int limit = (64 << 10) / 8 - ShmSettings.MESSAGE_OVERHEAD;
            Throwable t = assertThrows(Throwable.class,
                    () -> ep.sendActiveMessage(1, null, ByteBuffer.allocate(limit + 1)).toCompletableFuture()
                            .get(10, TimeUnit.SECONDS));
            Throwable cause = t instanceof ExecutionException ? t.getCause() : t;
            assertInstanceOf(FencelineException.class, cause, String.valueOf(cause));
            assertTrue(String.valueOf(cause.getMessage()).contains(Integer.toString(limit)), cause.getMessage());

            ep.sendActiveMessage(2, null, ByteBuffer.allocate(limit));
            FakeShmPeer.Message am = fake.await(m -> m.type() == ShmWire.AM, "the active message that fits");
            assertEquals(2, am.getInt(ShmWire.AM_ID));
            assertEquals(ShmWire.AM_DATA + limit, am.bytes().length);
        }
    }
}
