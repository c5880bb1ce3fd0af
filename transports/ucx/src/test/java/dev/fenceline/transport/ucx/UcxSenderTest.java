package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Replies that wait for room are kept in order, and no more of them than the bound: a peer that
 * sends requests and never takes the answers (here a posix iface that never progresses, whose
 * queue fills) has its channel failed, naming the bound, rather than this worker holding them
 * without end.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSenderTest {
    @BeforeEach
    void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void repliesAPeerNeverTakesAreBounded() {
        UctResource posix = UcxNative.resources().stream()
                .filter(r -> r.transport().equals("posix")).findFirst()
                .orElseThrow(() -> new AssertionError("no posix in " + UcxNative.resources()));
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(posix, Map.of());
            UctIface b = w.open(posix, Map.of()); // never progressed: it takes nothing
            UctEndpoint ep = a.connect(b.address());
            UcxPeer peer = new UcxPeer(UUID.randomUUID(), new UcxAddress("h", 1, 1, List.of(), null));
            UcxChannel ch = new UcxChannel(1, peer, a, 0, 0, ep, UcxWireup.Mode.IFACE, false, UcxChannel.State.READY);
            List<String> failures = new ArrayList<>();
            UcxSender sender = new UcxSender((channel, why) -> {
                failures.add(why);
                channel.state = UcxChannel.State.FAILED;
            });
            int size = 4096;
            UnsafeBuffer reply = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
            long most = UcxSender.MAX_BACKLOG_BYTES / size + 1000;
            int sent = 0;
            while (failures.isEmpty() && sent < most) {
                reply.putLong(0, sent);
                sender.send(ch, 3, reply, size);
                sent++;
                assertTrue(ch.backlogBytes <= UcxSender.MAX_BACKLOG_BYTES, "kept " + ch.backlogBytes);
            }
            assertEquals(1, failures.size(), "failed once the bound was reached, after " + sent + " replies");
            assertTrue(failures.get(0).contains("would pass the bound of " + UcxSender.MAX_BACKLOG_BYTES),
                    failures.get(0));
            assertTrue(ch.backlogBytes > UcxSender.MAX_BACKLOG_BYTES - size, "kept up to the bound: " + ch.backlogBytes);
        }
    }
}
