package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.spi.LaneCapabilities;
import dev.fenceline.spi.Protocol;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Protocol selection from lane capabilities, a pure function. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProtocolsTest {
    /** RDMA's shape: short 64 B, copy up to 8 KiB, zero-copy up to 1 MiB from registered memory, ADD in hardware. */
    private static final LaneCapabilities RDMA = new LaneCapabilities(64, 8192, 1 << 20, true, Set.of(AtomicOp.ADD),
            Set.of(AtomicOp.ADD, AtomicOp.SWAP), true, true, false);
    /** tcp's: copied into the frame up to 1 KiB, else from the caller's buffer. */
    private static final LaneCapabilities TCP = new LaneCapabilities(1024, 0, 256 << 10, false, Set.of(), Set.of(),
            false, true, true);

    @Test
    void rmaTakesTheCheapestProtocolItsPayloadFits() {
        assertEquals(Protocol.SHORT, Protocols.rma(64, RDMA, false));
        assertEquals(Protocol.BCOPY, Protocols.rma(65, RDMA, true));
        assertEquals(Protocol.BCOPY, Protocols.rma(8192, RDMA, true));
        assertEquals(Protocol.ZCOPY, Protocols.rma(8193, RDMA, true));
        assertEquals(Protocol.ZCOPY, Protocols.rma(1 << 20, RDMA, true));
        assertEquals(Protocol.SHORT, Protocols.rma(1024, TCP, false));
        assertEquals(Protocol.ZCOPY, Protocols.rma(1025, TCP, false), "tcp's zero-copy needs no registration");
        assertEquals(Protocol.BCOPY, Protocols.rma(100, LaneCapabilities.software(4096, true), false));
    }

    @Test
    void zeroCopyThatNeedsRegisteredMemoryIsOnlyForRegisteredBuffers() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Protocols.rma(8193, RDMA, false));
        assertTrue(e.getMessage().contains("8193 bytes fit no protocol") && e.getMessage().contains("registered"),
                e.getMessage());
        assertEquals(8192, Protocols.maxPayload(RDMA, false), "an unregistered buffer is split by the copy limit");
        assertEquals(1 << 20, Protocols.maxPayload(RDMA, true));
        assertEquals(256 << 10, Protocols.maxPayload(TCP, false));
        assertThrows(IllegalArgumentException.class, () -> Protocols.rma((1 << 20) + 1, RDMA, true));
    }

    @Test
    void atomicsUseTheHardwareWhereTheLaneHasItForThatOpAndWidth() {
        assertEquals(Protocol.HARDWARE_ATOMIC, Protocols.choose(atomic(AtomicOp.ADD, 4), RDMA, false));
        assertEquals(Protocol.SOFTWARE_ATOMIC, Protocols.choose(atomic(AtomicOp.SWAP, 4), RDMA, false));
        assertEquals(Protocol.HARDWARE_ATOMIC, Protocols.choose(atomic(AtomicOp.SWAP, 8), RDMA, false));
        assertEquals(Protocol.HARDWARE_ATOMIC, Protocols.choose(TransportOp.atomic(TransportOp.Kind.CSWAP, 1, 0, null,
                null, 8, 1, 0), RDMA, false));
        assertEquals(Protocol.SOFTWARE_ATOMIC, Protocols.choose(atomic(AtomicOp.ADD, 8), TCP, false));
        assertEquals(Protocol.ACTIVE_MESSAGE, Protocols.choose(TransportOp.activeMessage(1, 3, ByteBuffer.allocate(0),
                ByteBuffer.allocate(4)), TCP, false));
        assertEquals(Protocol.ZCOPY, Protocols.choose(TransportOp.rma(TransportOp.Kind.GET, 1, 0, null,
                ByteBuffer.allocate(10_000)), RDMA, true));
    }

    @Test
    void capabilitiesWithoutAWayToCarryAPayloadAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new LaneCapabilities(0, 0, 0, false, Set.of(), Set.of(),
                false, true, true));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LaneCapabilities(0, 0,
                1 << 20, true, Set.of(), Set.of(), false, true, true));
        assertTrue(e.getMessage().contains("needs a copy protocol too"), e.getMessage());
        assertEquals(1 << 20, RDMA.maxPayload());
    }

    private static TransportOp atomic(AtomicOp op, int width) {
        return TransportOp.atomic(TransportOp.Kind.ATOMIC_FETCH, 1, 0, null, op, width, 1, 0);
    }
}
