package dev.fenceline.perf;

import io.netty.util.ResourceLeakDetector;
import java.util.Locale;

/**
 * Netty's buffer leak detection for a perf run ({@code --netty-leak-detection}): set for the run in
 * this process, handed to a forked target, and given back to the JVM after. Netty's default (simple)
 * tracks one buffer in 128 with a stack trace, which a tcp round trip pays for on each side;
 * ucx_perftest tracks nothing.
 */
final class NettyLeakDetection {
    /** Netty's property, and its older name. */
    private static final String PROPERTY = "io.netty.leakDetection.level";
    private static final String OLD_PROPERTY = "io.netty.leakDetectionLevel";

    private NettyLeakDetection() {
    }

    /**
     * @param level disabled, simple, advanced or paranoid (any case)
     * @return the level
     * @throws IllegalArgumentException naming the levels, for any other
     */
    static ResourceLeakDetector.Level parse(String level) {
        try {
            return ResourceLeakDetector.Level.valueOf(level.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--netty-leak-detection " + level
                    + ": expected disabled, simple, advanced or paranoid", e);
        }
    }

    /**
     * Sets the level for the run, unless it was not asked for and the JVM was started with Netty's
     * property, which then holds.
     *
     * @param level the level asked for, or the default
     * @param given whether the option was given
     */
    static void apply(ResourceLeakDetector.Level level, boolean given) {
        if (!given && (System.getProperty(PROPERTY) != null || System.getProperty(OLD_PROPERTY) != null)) {
            return;
        }
        ResourceLeakDetector.setLevel(level);
    }

    /** @return the level now, as the header names it */
    static String now() {
        return ResourceLeakDetector.getLevel().name().toLowerCase(Locale.ROOT);
    }

    /** @return the flag that gives a target process this level now: both sides measure with the same */
    static String targetFlag() {
        return "-D" + PROPERTY + "=" + now();
    }
}
