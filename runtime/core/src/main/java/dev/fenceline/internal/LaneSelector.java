package dev.fenceline.internal;

import dev.fenceline.AtomicOp;
import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneCapabilities;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Protocol selection: which lanes an operation class may use, as a pure function of the lane table,
 * computed once per table. A class uses the lanes of the most preferred transport (the lowest tier)
 * that has a live lane of any type the class can use, and of those every live lane of the class's
 * most preferred type (multi-rail); the endpoint spreads requests over them round-robin. So lanes of
 * a later transport stand by until the earlier one has nothing left for the class, which is
 * failover across transports. Atomics go further, per operation and width: of the class's lanes,
 * those whose hardware does that one ({@link #atomicLanesFor}), so an RDMA lane takes the fetch-add
 * it does in hardware while a software lane beside it takes the XOR it does not.
 */
public final class LaneSelector {
    private static final int[] NONE = new int[0];
    /**
     * Selections already computed, shared: every endpoint over the same kind of lanes has the same
     * one (a worker with ten thousand endpoints would hold ten thousand copies of a few hundred
     * bytes). Bounded; past the bound a selection is simply not shared.
     */
    private static final ConcurrentHashMap<Selection, int[][]> SHARED = new ConcurrentHashMap<>();
    private static final int MAX_SHARED = 4096;

    /** A selection as a key: compared by content. */
    private record Selection(int[][] lanes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Selection s && Arrays.deepEquals(lanes, s.lanes);
        }

        @Override
        public int hashCode() {
            return Arrays.deepHashCode(lanes);
        }
    }

    private static int[][] shared(int[][] computed) {
        if (SHARED.size() >= MAX_SHARED) {
            int[][] known = SHARED.get(new Selection(computed));
            return known != null ? known : computed;
        }
        return SHARED.computeIfAbsent(new Selection(computed), Selection::lanes);
    }

    private LaneSelector() {
    }

    /** Preferred lane types per class; AM last, where the software protocol emulates RMA and atomics. */
    static List<LaneType> preference(OpClass c) {
        return switch (c) {
            case RMA_SHORT, RMA_MEDIUM -> List.of(LaneType.RMA, LaneType.RMA_BW, LaneType.AM);
            case RMA_LARGE -> List.of(LaneType.RMA_BW, LaneType.RMA, LaneType.AM);
            case ATOMIC -> List.of(LaneType.AMO, LaneType.AM);
            case ACTIVE_MESSAGE -> List.of(LaneType.AM);
        };
    }

    /**
     * @param table the lane table
     * @param c an operation class
     * @return the live lanes of the most preferred type that is available, ascending; empty if none
     */
    public static int[] lanesFor(LaneTable table, OpClass c) {
        List<LaneType> preferred = preference(c);
        int tier = Integer.MAX_VALUE;
        for (int i = 0; i < table.size(); i++) {
            if (table.isLive(i) && table.tier(i) < tier && servesAny(table, i, preferred)) {
                tier = table.tier(i);
            }
        }
        for (LaneType t : preferred) {
            int n = 0;
            int[] found = new int[table.size()];
            for (int i = 0; i < table.size(); i++) {
                if (table.isLive(i) && table.hasType(i, t) && table.tier(i) == tier) {
                    found[n++] = i;
                }
            }
            if (n > 0) {
                return Arrays.copyOf(found, n);
            }
        }
        return NONE;
    }

    /**
     * @param table the lane table
     * @param atomicLanes the lanes the {@link OpClass#ATOMIC} class uses ({@link #lanesFor})
     * @param op the operation, or null for compare-and-swap
     * @param width 4 or 8
     * @return of those, the lanes whose hardware does {@code op} at {@code width}; all of them if none does
     */
    public static int[] atomicLanesFor(LaneTable table, int[] atomicLanes, AtomicOp op, int width) {
        int n = 0;
        int[] hw = new int[atomicLanes.length];
        for (int lane : atomicLanes) {
            LaneCapabilities caps = table.connection(lane).capabilities();
            if (caps.hardwareAtomic(op, width)) {
                hw[n++] = lane;
            }
        }
        return n == 0 || n == atomicLanes.length ? atomicLanes : Arrays.copyOf(hw, n);
    }

    /**
     * @param op an atomic operation, or null for compare-and-swap
     * @param width 4 or 8
     * @return its index in {@link #selectAtomics}
     */
    public static int atomicIndex(AtomicOp op, int width) {
        return (op == null ? AtomicOp.values().length : op.ordinal()) * 2 + (width == 8 ? 1 : 0);
    }

    /**
     * @param table the lane table
     * @param atomicLanes the lanes of the atomic class
     * @return {@link #atomicLanesFor} of every operation and width, indexed by {@link #atomicIndex};
     *     shared, do not modify
     */
    public static int[][] selectAtomics(LaneTable table, int[] atomicLanes) {
        int[][] out = new int[(AtomicOp.values().length + 1) * 2][];
        for (int width : new int[] {4, 8}) {
            for (AtomicOp op : AtomicOp.values()) {
                out[atomicIndex(op, width)] = atomicLanesFor(table, atomicLanes, op, width);
            }
            out[atomicIndex(null, width)] = atomicLanesFor(table, atomicLanes, null, width);
        }
        return shared(out);
    }

    private static boolean servesAny(LaneTable table, int lane, List<LaneType> types) {
        for (LaneType t : types) {
            if (table.hasType(lane, t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param table the lane table
     * @return the candidate lanes for every {@link OpClass}, indexed by ordinal; shared, do not modify
     */
    public static int[][] select(LaneTable table) {
        OpClass[] classes = OpClass.values();
        int[][] lanes = new int[classes.length][];
        for (OpClass c : classes) {
            lanes[c.ordinal()] = lanesFor(table, c);
        }
        return shared(lanes);
    }

    /**
     * @param table the lane table
     * @return the lanes RMA and atomics can use, as a bit mask (the weak fence mode needs exactly one)
     */
    public static long fencedLanes(LaneTable table) {
        long m = 0;
        for (OpClass c : new OpClass[] {OpClass.RMA_SHORT, OpClass.RMA_MEDIUM, OpClass.RMA_LARGE, OpClass.ATOMIC}) {
            for (int lane : lanesFor(table, c)) {
                m |= 1L << lane;
            }
        }
        return m;
    }
}
