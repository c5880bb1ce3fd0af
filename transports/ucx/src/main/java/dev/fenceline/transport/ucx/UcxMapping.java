package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A peer's region as this process reaches it directly: UCT's shared-memory key, unpacked by the
 * progress agent, gives a local pointer to the region ({@code uct_rkey_ptr}), over which the calling
 * thread stores, loads and runs atomics itself (the fast path by grant), after a check of the owner's
 * key table: the key's extent against the owner's bounds once, when the agent made the mapping
 * ({@link KeyTable.View#covers}), and the slot's registration on every access. The agent puts it in
 * the key's transport cache once it unpacked the key; the mapping stays as long as the process (the
 * agent never releases a key it published: a thread may be inside an access when the transport closes).
 *
 * @param owner the transport instance that made it (its agent): another transport's entry is not ours
 * @param peer the worker that owns the region
 * @param digest the digest of the key's UCT keys
 * @param base the key's first address
 * @param data the region, mapped, from {@code base}
 * @param view the same bytes, address-based: the hot sizes of the fast path go through it
 * @param registration the key's slot in the owner's table ({@link KeyTable.View#slotView})
 */
record UcxMapping(Object owner, UUID peer, long digest, long base, ByteBuffer data, UnsafeBuffer view,
        UnsafeBuffer registration) {
    UcxMapping {
        if (view.addressOffset() != BufferUtil.address(data) || view.capacity() != data.capacity()) {
            throw new IllegalArgumentException("ucx: a mapping's view must cover its data");
        }
        if (registration.byteArray() != null || registration.capacity() < KeyTable.SLOT) {
            // Its words are read by address (KeyTable.View.checkCovered).
            throw new IllegalArgumentException("ucx: a mapping's registration must be a mapped key-table slot");
        }
    }

    /**
     * @param owner the transport instance that makes it
     * @param peer the worker that owns the region
     * @param table the owner's key table, as this process mapped it
     * @param slot the region's slot in it, which {@link KeyTable.View#covers} accepted for the key
     * @param digest the digest of the key's UCT keys
     * @param base the key's first address
     * @param data the region, mapped, from {@code base}
     * @return the mapping of {@code data}
     */
    static UcxMapping of(Object owner, UUID peer, KeyTable.View table, int slot, long digest, long base,
            ByteBuffer data) {
        return new UcxMapping(owner, peer, digest, base, data, new UnsafeBuffer(data), table.slotView(slot));
    }

    /**
     * @return the access's offset in {@link #data}, checked against the owner's key table (the key's
     *     extent was checked against it when the mapping was made: {@link KeyTable.View#covers})
     * @throws RemoteAccessException unknown key, access denied, closed region, out of bounds
     */
    int check(RemoteKey key, long address, int bytes, Access needed) {
        KeyTable.View.checkCovered(registration, digest, key, address, bytes, needed);
        return (int) (address - base);
    }

    /** @return the atomic's offset, checked as above and for alignment */
    int checkAtomic(RemoteKey key, long address, int width) {
        int at = check(key, address, width, Access.ATOMIC);
        // Where it lands here too: the pointer comes from the key's base address, the peer's word.
        if (((address | view.addressOffset() + at) & (width - 1)) != 0) {
            throw new RemoteAccessException(RemoteAccessException.Reason.MISALIGNED, "ucx: address 0x"
                    + Long.toHexString(address) + " of key " + key.shortKey() + " (base 0x"
                    + Long.toHexString(base) + ") is not aligned to " + width + " bytes where it is mapped");
        }
        return at;
    }
}
