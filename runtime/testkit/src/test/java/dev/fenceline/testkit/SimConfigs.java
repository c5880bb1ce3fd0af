package dev.fenceline.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** The lane shapes the fence tests run on. */
final class SimConfigs {
    private SimConfigs() {
    }

    /** One lane carries everything: every fence can be weak. */
    static final String ONE_LANE = "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 50us } ]";

    /**
     * Two lanes that reorder: short RMA on lane 0, bulk RMA on lane 1, atomics spread over both
     * (multi-rail), each lane with its own random delay up to 100 us.
     */
    static final String TWO_LANES_REORDERING = "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 100us },"
            + "{ types = [RMA_BW, AMO], min-delay = 0us, max-delay = 100us } ]";

    static Config of(String lanes, String mode, long seed) {
        return ConfigFactory.parseString(lanes + "\nfenceline.fence.mode = " + mode
                + "\nfenceline.transport.sim.seed = " + seed);
    }

    static String lanes(String name) {
        return switch (name) {
            case "one-lane" -> ONE_LANE;
            case "two-lanes" -> TWO_LANES_REORDERING;
            default -> throw new IllegalArgumentException(name);
        };
    }
}
