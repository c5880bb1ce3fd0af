package dev.fenceline.spi;

import dev.fenceline.AtomicOp;
import java.util.EnumSet;
import java.util.Set;

/**
 * What one lane can do, as a backend states it (UCX's iface attributes are the model): the largest
 * payload per protocol, which atomics the hardware does without the target's CPU, what a flush
 * means, and whether the target deduplicates. The endpoint chooses each operation's protocol from
 * these ({@link dev.fenceline.spi.support.Protocols}, a pure function) and tells the lane in
 * {@link TransportOp#protocol()}.
 *
 * @param maxShort the largest payload sent inline with the request (the caller's bytes copied into
 *     it), 0 for none
 * @param maxBcopy the largest payload copied into a transport buffer first, 0 for none
 * @param maxZcopy the largest payload sent from (or received into) the caller's buffer itself, 0 for none
 * @param zcopyNeedsRegisteredLocal whether zero-copy needs the local buffer registered with the
 *     transport (RDMA); then the endpoint hands the lane the buffer's registration
 *     ({@link TransportOp#localHandle()}) and uses copy protocols for an unregistered buffer
 * @param hardwareAtomics32 atomics on 4 bytes the lane does in hardware
 * @param hardwareAtomics64 atomics on 8 bytes the lane does in hardware
 * @param hardwareCompareAndSwap whether compare-and-swap is done in hardware (both widths)
 * @param flushMeansVisible whether a completed flush means the data is visible at the target (not
 *     only delivered to its adapter)
 * @param deduplicates as {@link LaneConnection#deduplicates()}
 */
public record LaneCapabilities(int maxShort, int maxBcopy, int maxZcopy, boolean zcopyNeedsRegisteredLocal,
        Set<AtomicOp> hardwareAtomics32, Set<AtomicOp> hardwareAtomics64, boolean hardwareCompareAndSwap,
        boolean flushMeansVisible, boolean deduplicates) {
    /**
     * Checks the sizes and freezes the sets.
     *
     * @param maxShort the largest payload sent inline with the request, 0 for none
     * @param maxBcopy the largest payload copied into a transport buffer first, 0 for none
     * @param maxZcopy the largest payload sent from or received into the caller's buffer, 0 for none
     * @param zcopyNeedsRegisteredLocal whether zero-copy needs the local buffer registered
     * @param hardwareAtomics32 atomics on 4 bytes done in hardware
     * @param hardwareAtomics64 atomics on 8 bytes done in hardware
     * @param hardwareCompareAndSwap whether compare-and-swap is done in hardware
     * @param flushMeansVisible whether a completed flush means visible at the target
     * @param deduplicates whether the target deduplicates
     */
    public LaneCapabilities {
        if (maxShort < 0 || maxBcopy < 0 || maxZcopy < 0 || Math.max(maxShort, Math.max(maxBcopy, maxZcopy)) == 0) {
            throw new IllegalArgumentException("a lane needs some protocol for payloads: short " + maxShort
                    + ", bcopy " + maxBcopy + ", zcopy " + maxZcopy + " (each >= 0, one > 0)");
        }
        if (zcopyNeedsRegisteredLocal && Math.max(maxShort, maxBcopy) == 0) {
            throw new IllegalArgumentException("a lane whose zero-copy needs registered local memory needs a copy"
                    + " protocol too (short or bcopy), for buffers that are not registered");
        }
        hardwareAtomics32 = Set.copyOf(hardwareAtomics32);
        hardwareAtomics64 = Set.copyOf(hardwareAtomics64);
    }

    /**
     * A lane whose target applies everything in software: payloads copied up to {@code maxFragment},
     * no hardware atomics, flush means visible (what every transport without hardware offload is).
     *
     * @param maxFragment the largest payload
     * @param deduplicates whether the target deduplicates
     * @return the capabilities
     */
    public static LaneCapabilities software(int maxFragment, boolean deduplicates) {
        return new LaneCapabilities(0, maxFragment, 0, false, EnumSet.noneOf(AtomicOp.class),
                EnumSet.noneOf(AtomicOp.class), false, true, deduplicates);
    }

    /** @return the largest payload of one operation, whatever the protocol */
    public int maxPayload() {
        return Math.max(maxShort, Math.max(maxBcopy, maxZcopy));
    }

    /**
     * @param op an atomic operation, or null for compare-and-swap
     * @param width 4 or 8
     * @return whether the lane does it in hardware
     */
    public boolean hardwareAtomic(AtomicOp op, int width) {
        if (op == null) {
            return hardwareCompareAndSwap;
        }
        return (width == 4 ? hardwareAtomics32 : hardwareAtomics64).contains(op);
    }
}
