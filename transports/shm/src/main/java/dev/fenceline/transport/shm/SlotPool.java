package dev.fenceline.transport.shm;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A fixed set of numbered slots (the gates and key-table slots of a control segment), taken and
 * given back from any thread without a lock: one bit per slot, set by compare-and-set. A slot is
 * the lowest free one at the moment of the scan, so slot numbers stay small and reuse is prompt.
 */
final class SlotPool {
    private final int slots;
    private final AtomicLongArray words;

    /** @param slots how many slots there are, at least 1 */
    SlotPool(int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("a slot pool needs at least one slot, not " + slots);
        }
        this.slots = slots;
        this.words = new AtomicLongArray((slots + 63) >>> 6);
    }

    /** @return a slot now taken by the caller, or -1 if every slot is taken */
    int take() {
        for (int w = 0; w < words.length(); w++) {
            long word;
            while ((word = words.get(w)) != -1L) {
                int bit = Long.numberOfTrailingZeros(~word);
                int slot = (w << 6) + bit;
                if (slot >= slots) {
                    return -1; // the last word's spare bits are never slots
                }
                if (words.compareAndSet(w, word, word | (1L << bit))) {
                    return slot;
                }
            }
        }
        return -1;
    }

    /**
     * @param slot a slot the caller took
     * @throws IllegalStateException if the slot is not taken (given back twice, or never taken)
     */
    void release(int slot) {
        if (slot < 0 || slot >= slots) {
            throw new IllegalArgumentException("slot " + slot + " is not one of the " + slots + " slots");
        }
        int w = slot >>> 6;
        long bit = 1L << (slot & 63);
        long word;
        do {
            word = words.get(w);
            if ((word & bit) == 0) {
                throw new IllegalStateException("slot " + slot + " is not taken");
            }
        } while (!words.compareAndSet(w, word, word & ~bit));
    }

    /** @return how many slots are taken (a moment's count) */
    int taken() {
        int n = 0;
        for (int w = 0; w < words.length(); w++) {
            n += Long.bitCount(words.get(w));
        }
        return n;
    }

    /** @return how many slots the pool has */
    int slots() {
        return slots;
    }
}
