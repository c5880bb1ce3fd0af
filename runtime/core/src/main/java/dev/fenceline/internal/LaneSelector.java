package dev.fenceline.internal;

import dev.fenceline.LaneType;
import java.util.List;

/**
 * Protocol selection: which lanes an operation class may use, as a pure function of the lane table,
 * computed once per table. A class uses the lanes of the most preferred transport (the lowest tier)
 * that has a live lane of any type the class can use, and of those every live lane of the class's
 * most preferred type (multi-rail); the endpoint spreads requests over them round-robin. So lanes of
 * a later transport stand by until the earlier one has nothing left for the class, which is
 * failover across transports.
 */
public final class LaneSelector {
    private static final int[] NONE = new int[0];

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
                int[] lanes = java.util.Arrays.copyOf(found, n);
                return c == OpClass.ATOMIC ? preferHardware(table, lanes) : lanes;
            }
        }
        return NONE;
    }

    /** Of lanes that carry atomics, those whose hardware does them, if any do (RDMA beside a software lane). */
    private static int[] preferHardware(LaneTable table, int[] lanes) {
        int n = 0;
        int[] hw = new int[lanes.length];
        for (int lane : lanes) {
            dev.fenceline.spi.LaneCapabilities caps = table.connection(lane).capabilities();
            if (!caps.hardwareAtomics64().isEmpty() || !caps.hardwareAtomics32().isEmpty()
                    || caps.hardwareCompareAndSwap()) {
                hw[n++] = lane;
            }
        }
        return n == 0 || n == lanes.length ? lanes : java.util.Arrays.copyOf(hw, n);
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
     * @return the candidate lanes for every {@link OpClass}, indexed by ordinal
     */
    public static int[][] select(LaneTable table) {
        OpClass[] classes = OpClass.values();
        int[][] lanes = new int[classes.length][];
        for (OpClass c : classes) {
            lanes[c.ordinal()] = lanesFor(table, c);
        }
        return lanes;
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
