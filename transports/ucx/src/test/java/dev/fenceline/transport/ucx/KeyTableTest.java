package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Access;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Map;
import java.util.UUID;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The owner's key table as a peer reads it: which keys it vouches for whole (a mapping is made only
 * for those), and the check of each access through such a mapping, which reads the registration but
 * not its bounds again. No UCX needed: the table is plain memory here.
 */
class KeyTableTest {
    private static final UUID OWNER = UUID.randomUUID();
    private static final long BASE = 0x7000_0000L;
    private static final long LENGTH = 4096;
    private static final long KEY_ID = 0x1234_5678_9abcL;
    private static final long DIGEST = 0x0fed_cba9L;

    private final ByteBuffer memory = ByteBuffer.allocateDirect(KeyTable.bytes(4));
    private final KeyTable owner = new KeyTable(BufferUtil.address(memory), 4);
    private final KeyTable.View view = new KeyTable.View(BufferUtil.address(memory), memory.capacity());

    private static RemoteKey key(long keyId, long base, long length) {
        return new RemoteKey(OWNER, keyId, base, length, Map.of());
    }

    private void register(int slot, java.util.Set<Access> access) {
        owner.open(slot, KEY_ID, BASE, LENGTH, access, DIGEST);
    }

    @Test
    void theTableVouchesForAKeyWithinWhatItsOwnerRegistered() {
        register(1, Access.all());
        assertTrue(view.covers(1, DIGEST, key(KEY_ID, BASE, LENGTH)), "the key as registered");
        assertTrue(view.covers(1, DIGEST, key(KEY_ID, BASE + 64, LENGTH - 64)), "a part of the region");
    }

    @Test
    void aKeyClaimingMoreThanTheRegistrationOrAnotherOneIsNotVouchedFor() {
        register(1, Access.all());
        assertFalse(view.covers(1, DIGEST, key(KEY_ID, BASE, LENGTH + 1)), "one byte longer");
        assertFalse(view.covers(1, DIGEST, key(KEY_ID, BASE - 8, LENGTH)), "starting before the region");
        assertFalse(view.covers(1, DIGEST, key(KEY_ID, BASE + 8, LENGTH)), "ending after it");
        assertFalse(view.covers(1, DIGEST, key(KEY_ID, BASE, Long.MAX_VALUE)), "the whole address space");
        assertFalse(view.covers(1, DIGEST, key(KEY_ID, BASE + 8, -8)), "a negative length");
        assertFalse(view.covers(1, DIGEST, key(KEY_ID + 1, BASE, LENGTH)), "another key id");
        assertFalse(view.covers(1, DIGEST + 1, key(KEY_ID, BASE, LENGTH)), "another region's UCT keys");
        assertFalse(view.covers(0, DIGEST, key(KEY_ID, BASE, LENGTH)), "a free slot");
        assertFalse(view.covers(4, DIGEST, key(KEY_ID, BASE, LENGTH)), "beyond the table");
        assertFalse(view.covers(-1, DIGEST, key(KEY_ID, BASE, LENGTH)), "a negative slot");
        owner.close(1);
        assertFalse(view.covers(1, DIGEST, key(KEY_ID, BASE, LENGTH)), "a closed region");
    }

    @Test
    void anAccessThroughAVouchedKeyIsCheckedAgainstTheRegistrationAndTheKey() {
        register(2, EnumSet.of(Access.WRITE));
        RemoteKey k = key(KEY_ID, BASE, LENGTH);
        assertTrue(view.covers(2, DIGEST, k));
        UnsafeBuffer slot = view.slotView(2);
        assertDoesNotThrow(() -> covered(slot, k, BASE + LENGTH - 8, Access.WRITE));
        assertEquals(Reason.ACCESS_DENIED, refused(() -> covered(slot, k, BASE, Access.READ)));
        assertEquals(Reason.OUT_OF_BOUNDS, refused(() -> covered(slot, k, BASE + LENGTH - 4, Access.WRITE)));
        assertEquals(Reason.OUT_OF_BOUNDS, refused(() -> covered(slot, k, BASE - 8, Access.WRITE)));
        owner.close(2);
        assertEquals(Reason.REGION_CLOSED, refused(() -> covered(slot, k, BASE, Access.WRITE)));
        // The slot reused for another region: a new key id and digest, so the old key's mapping is refused.
        owner.release(2);
        owner.open(2, KEY_ID + 1, BASE, LENGTH, Access.all(), DIGEST + 1);
        assertEquals(Reason.UNKNOWN_KEY, refused(() -> covered(slot, k, BASE, Access.WRITE)));
        // A slot's words are read by address: no view of a slot outside the table.
        assertThrows(IllegalArgumentException.class, () -> view.slotView(4));
        assertThrows(IllegalArgumentException.class, () -> view.slotView(-1));
    }

    /** An 8-byte access through a mapping of the slot. */
    private static void covered(UnsafeBuffer slot, RemoteKey k, long address, Access needed) {
        KeyTable.View.checkCovered(slot, DIGEST, k, address, 8, needed);
    }

    @Test
    void aTableClaimingMoreSlotsThanAnyHasIsNotOne() {
        // The slot count and the mapped length are the peer's words: 107,374,183 slots of 40 bytes
        // and a length past 4 GiB pass a check done in long arithmetic, and their size in int
        // arithmetic wraps around to 88 bytes.
        ByteBuffer forged = ByteBuffer.allocateDirect(KeyTable.HEADER).order(java.nio.ByteOrder.nativeOrder());
        forged.putInt(0, KeyTable.MAGIC).putInt(4, KeyTable.VERSION).putInt(8, 107_374_183);
        dev.fenceline.FencelineException e = assertThrows(dev.fenceline.FencelineException.class,
                () -> new KeyTable.View(BufferUtil.address(forged), 1L << 33));
        assertTrue(e.getMessage().contains("not one"), e.getMessage());
        forged.putInt(8, KeyTable.MAX_SLOTS + 1);
        assertThrows(dev.fenceline.FencelineException.class,
                () -> new KeyTable.View(BufferUtil.address(forged), 1L << 40));
    }

    @Test
    void theFullCheckStillReadsTheRegisteredBounds() {
        register(3, Access.all());
        RemoteKey longer = key(KEY_ID, BASE, 2 * LENGTH); // its own bounds pass; the owner's do not
        assertEquals(Reason.OUT_OF_BOUNDS, refused(() -> view.check(3, DIGEST, longer, BASE + LENGTH, 8,
                Access.WRITE)));
        assertDoesNotThrow(() -> view.check(3, DIGEST, longer, BASE + LENGTH - 8, 8, Access.WRITE));
        assertEquals(Reason.UNKNOWN_KEY, refused(() -> view.check(9, DIGEST, longer, BASE, 8, Access.WRITE)));
    }

    @Test
    void boundsAnOwnerWroteToOverflowTheCheckAreRefused() {
        RemoteKey k = key(KEY_ID, BASE, LENGTH);
        // A base far below any address: the access's distance from it overflows a long
        owner.open(1, KEY_ID, Long.MIN_VALUE, Long.MAX_VALUE, Access.all(), DIGEST);
        assertEquals(Reason.OUT_OF_BOUNDS, refused(() -> view.check(1, DIGEST, k, BASE, 8, Access.WRITE)));
        assertFalse(view.covers(1, DIGEST, k), "a negative base");
        // A negative length: the length left after the access overflows the other way
        owner.open(2, KEY_ID, BASE, Long.MIN_VALUE, Access.all(), DIGEST);
        assertEquals(Reason.OUT_OF_BOUNDS, refused(() -> view.check(2, DIGEST, k, BASE, 8, Access.WRITE)));
        assertFalse(view.covers(2, DIGEST, k), "a negative length");
        // The honest registration beside them still passes
        owner.open(3, KEY_ID, BASE, LENGTH, Access.all(), DIGEST);
        assertDoesNotThrow(() -> view.check(3, DIGEST, k, BASE, 8, Access.WRITE));
    }

    private static Reason refused(org.junit.jupiter.api.function.Executable access) {
        return assertThrows(RemoteAccessException.class, access).reason();
    }
}
