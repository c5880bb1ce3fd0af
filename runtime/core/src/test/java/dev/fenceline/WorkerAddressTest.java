package dev.fenceline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * An address is refused where it is made if its bytes could not carry it: a transport name over
 * its one length byte, too many transports, an address blob over the bound. toBytes truncated the
 * lengths without a word and fromBytes then misread or refused what the worker had offered; a
 * transport named twice on the wire is refused too (the last one silently won).
 */
class WorkerAddressTest {
    private static final UUID ID = UUID.randomUUID();

    @Test
    void whatTheBytesCannotCarryIsRefusedWhereItIsMade() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new WorkerAddress(ID, "w", Map.of("t".repeat(256), new byte[1])));
        assertTrue(e.getMessage().contains("256 UTF-8 bytes, outside [1, 255]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new WorkerAddress(ID, "w", Map.of("", new byte[1])));
        e = assertThrows(IllegalArgumentException.class,
                () -> new WorkerAddress(ID, "w", Map.of("tcp", new byte[(1 << 16) + 1])));
        assertTrue(e.getMessage().contains("65537 bytes, more than 65536"), e.getMessage());
        Map<String, byte[]> many = new LinkedHashMap<>();
        for (int i = 0; i < 65; i++) {
            many.put("t" + i, new byte[0]);
        }
        e = assertThrows(IllegalArgumentException.class, () -> new WorkerAddress(ID, "w", many));
        assertTrue(e.getMessage().contains("at most 64 transports, not 65"), e.getMessage());

        many.remove("t64"); // at the bounds, it round-trips
        many.put("t".repeat(255), new byte[1 << 16]);
        many.remove("t0");
        WorkerAddress a = new WorkerAddress(ID, "w", many);
        WorkerAddress back = WorkerAddress.fromBytes(a.toBytes());
        assertEquals(a.transports(), back.transports());
        assertEquals(1 << 16, back.transportAddress("t".repeat(255)).length);
    }

    @Test
    void aTransportNamedTwiceOnTheWireIsRefused() {
        byte[] good = new WorkerAddress(ID, "w", Map.of("tcp", new byte[] {1})).toBytes();
        byte[] entry = ByteBuffer.allocate(1 + 3 + 4 + 1).put((byte) 3).put("tcp".getBytes(StandardCharsets.UTF_8))
                .putInt(1).put((byte) 2).array();
        ByteBuffer twice = ByteBuffer.allocate(good.length + entry.length).put(good).put(entry);
        int countAt = 4 + 1 + 16 + 2 + 1; // magic, version, id, name length, "w"
        twice.put(countAt, (byte) 2);
        FencelineException e = assertThrows(FencelineException.class, () -> WorkerAddress.fromBytes(twice.array()));
        assertTrue(e.getMessage().contains("transport 'tcp' named twice"), e.getMessage());
    }
}
