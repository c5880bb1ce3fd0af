package dev.fenceline.internal;

import dev.fenceline.LaneType;
import java.util.List;

/**
 * Protocol selection: which lane an operation class uses, as a pure function of the lane table,
 * computed once per table into {@link #select(LaneTable)}'s array.
 */
public final class LaneSelector {
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
     * @return the lowest live lane of the most preferred type, or -1 if no live lane can carry it
     */
    public static int laneFor(LaneTable table, OpClass c) {
        for (LaneType t : preference(c)) {
            for (int i = 0; i < table.size(); i++) {
                if (table.isLive(i) && table.hasType(i, t)) {
                    return i;
                }
            }
        }
        return -1;
    }

    /**
     * @param table the lane table
     * @return the lane for every {@link OpClass}, indexed by ordinal
     */
    public static int[] select(LaneTable table) {
        OpClass[] classes = OpClass.values();
        int[] lanes = new int[classes.length];
        for (OpClass c : classes) {
            lanes[c.ordinal()] = laneFor(table, c);
        }
        return lanes;
    }

    /**
     * @param table the lane table
     * @return the lanes RMA and atomics can use, as a bit mask (the weak fence mode needs exactly one)
     */
    public static long fencedLanes(LaneTable table) {
        int[] lanes = select(table);
        long m = 0;
        for (OpClass c : new OpClass[] {OpClass.RMA_SHORT, OpClass.RMA_MEDIUM, OpClass.RMA_LARGE, OpClass.ATOMIC}) {
            if (lanes[c.ordinal()] >= 0) {
                m |= 1L << lanes[c.ordinal()];
            }
        }
        return m;
    }
}
