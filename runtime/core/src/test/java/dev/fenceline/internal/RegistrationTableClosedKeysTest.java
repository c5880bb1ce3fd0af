package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** A closed region is reported as closed, and the table does not keep every closed key forever. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTableClosedKeysTest {
    private final RegistrationTable table = new RegistrationTable(UUID.randomUUID(), "keys");

    private Reason refusal(MemoryRegion r) {
        return new Reason(assertThrows(RemoteAccessException.class,
                () -> table.put(r.remoteKey().keyId(), r.address(), ByteBuffer.allocate(1))).reason());
    }

    private record Reason(RemoteAccessException.Reason value) {
    }

    @Test
    void aRecentlyClosedKeyIsClosedAndAnOldOneIsUnknown() {
        MemoryRegion first = table.allocate(64);
        first.close();
        assertEquals(RemoteAccessException.Reason.REGION_CLOSED, refusal(first).value());
        for (int i = 0; i < RegistrationTable.CLOSED_KEYS_REMEMBERED; i++) {
            table.allocate(8).close();
        }
        assertEquals(0, table.openRegions());
        assertEquals(RemoteAccessException.Reason.UNKNOWN_KEY, refusal(first).value(),
                "forgotten after " + RegistrationTable.CLOSED_KEYS_REMEMBERED + " later closes");
        MemoryRegion last = table.allocate(8);
        last.close();
        assertEquals(RemoteAccessException.Reason.REGION_CLOSED, refusal(last).value());
    }
}
