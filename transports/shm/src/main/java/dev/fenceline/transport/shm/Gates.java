package dev.fenceline.transport.shm;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The gates of a worker's ring connections, in its own control segment, where the peers it
 * connects to read them: the origin's means of taking back what it put in a peer's inbox, even
 * while that peer is stopped. Each slot holds a connection id and one word: how many of that
 * connection's records the target has taken, and whether it is taking one now, or the origin
 * revoked the rest.
 *
 * <p>The target enters the gate before it applies a record and leaves it after (the record's
 * answer is written by then), counting one more; a revoked gate, or one that now belongs to
 * another connection, turns the record away unapplied. The origin revokes by one compare-and-swap:
 * from idle, the count says exactly which records were taken and that no other ever will be; from
 * busy, one record is being applied and will be the last (the target finishes it and leaves the
 * gate revoked). So the origin knows every copy's fate, without the target's help.
 *
 * <pre>
 * slot: conn u64, word u64 = taken &lt;&lt; 2 | state   (state: 0 idle, 1 busy, 2 revoked, 3 busy and revoked)
 * </pre>
 */
final class Gates {
    /** Bytes per slot. */
    static final int SLOT = 16;
    static final long IDLE = 0;
    static final long BUSY = 1;
    static final long REVOKED = 2;
    static final long BUSY_REVOKED = 3;
    private static final long STATE = 3;
    /**
     * The target's compare-and-swaps tried on one word before giving up. Each side changes a gate's
     * word at most twice per record, so an honest pair needs a few; only a peer writing the word
     * without end (it is in shared memory) fails more, and must not keep the target's thread, which
     * serves every peer, in the loop.
     */
    static final int MAX_TRIES = 1024;

    private final AtomicBuffer table;

    /** @param table the gate table (a multiple of {@link #SLOT} bytes) */
    Gates(AtomicBuffer table) {
        this.table = table;
    }

    /** @return how many slots there are */
    int slots() {
        return table.capacity() / SLOT;
    }

    /** @return whether {@code slot} is a slot of this table (a peer names it: check before use) */
    boolean valid(int slot) {
        return slot >= 0 && slot < slots();
    }

    /**
     * What the origin learned when it revoked a gate.
     *
     * @param taken how many records the target had taken completely
     * @param inProgress whether it was applying one more, which will be its last
     */
    record Revoked(long taken, boolean inProgress) {
    }

    // ------------------------------------------------------------------ origin side

    /**
     * Opens a slot for a new connection (the origin's own slot: no target uses it yet).
     *
     * @param slot the slot
     * @param conn the connection id
     */
    void open(int slot, long conn) {
        int at = slot * SLOT;
        table.putLongVolatile(at + 8, REVOKED); // closed while the id changes: a late record of an old id is refused
        table.putLongVolatile(at, conn);
        table.putLongVolatile(at + 8, IDLE);
    }

    /**
     * Revokes the gate: no record the target has not started will ever be applied. One atomic add
     * of the revoked bit, which only the origin sets (the target keeps it, never sets it), so the
     * word before it says exactly how many were taken and whether one is being applied, however
     * often a peer changes the word.
     *
     * @param slot the connection's slot
     * @return how many records the target took, and whether one is still being applied
     */
    Revoked revoke(int slot) {
        int at = slot * SLOT + 8;
        long w = table.getLongVolatile(at);
        if ((w & REVOKED) == 0) {
            w = table.getAndAddLong(at, REVOKED);
            if ((w & REVOKED) != 0) {
                table.getAndAddLong(at, -REVOKED); // a peer set it meanwhile: take back the carry
            }
        }
        return new Revoked(w >>> 2, (w & BUSY) != 0);
    }

    /**
     * @param slot a connection's slot
     * @return how many records the target took completely (read at any time)
     */
    long taken(int slot) {
        return table.getLongVolatile(slot * SLOT + 8) >>> 2;
    }

    /**
     * @param slot a connection's slot
     * @return whether the target is applying one of its records now
     */
    boolean busy(int slot) {
        return (table.getLongVolatile(slot * SLOT + 8) & BUSY) != 0;
    }

    // ------------------------------------------------------------------ target side

    /**
     * Enters the gate to apply one record of {@code conn}.
     *
     * @param slot the slot the connection's CONNECT named (checked with {@link #valid})
     * @param conn the record's connection
     * @return whether to apply it; false: the origin revoked the rest, or the slot moved on to
     *     another connection, or the origin kept changing the word for {@link #MAX_TRIES} tries, and
     *     the record must be dropped unanswered
     */
    boolean enter(int slot, long conn) {
        int at = slot * SLOT;
        for (int tries = 0; tries < MAX_TRIES; tries++) {
            long w = table.getLongVolatile(at + 8);
            if ((w & STATE) != IDLE || table.getLongVolatile(at) != conn) {
                return false;
            }
            if (table.compareAndSetLong(at + 8, w, w | BUSY)) {
                if (table.getLongVolatile(at) == conn) {
                    return true;
                }
                table.compareAndSetLong(at + 8, w | BUSY, w); // reopened for another connection meanwhile: undo
                return false;
            }
        }
        return false;
    }

    /**
     * @param slot a slot (checked with {@link #valid})
     * @param conn a connection id
     * @return whether the slot is open for {@code conn}: its origin opens it before the CONNECT and
     *     revokes it before the BYE, so a CONNECT or BYE that does not agree is not its origin's
     */
    boolean openFor(int slot, long conn) {
        int at = slot * SLOT;
        return table.getLongVolatile(at) == conn && (table.getLongVolatile(at + 8) & REVOKED) == 0;
    }

    /**
     * Leaves the gate after applying (and answering) one record: one more taken; revoked if the
     * origin revoked meanwhile.
     *
     * @param slot the slot entered
     * @return false if the origin kept changing the word for {@link #MAX_TRIES} tries: the gate is
     *     left busy, so the origin's revocation says this record may have been applied
     */
    boolean leave(int slot) {
        int at = slot * SLOT + 8;
        for (int tries = 0; tries < MAX_TRIES; tries++) {
            long w = table.getLongVolatile(at);
            long next = (((w >>> 2) + 1) << 2) | ((w & STATE) == BUSY_REVOKED ? REVOKED : IDLE);
            if ((w & BUSY) == 0 || table.compareAndSetLong(at, w, next)) {
                return true;
            }
        }
        return false;
    }
}
