package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** A strong fence completed: the lanes that carried earlier work were flushed remotely. */
@Name("dev.fenceline.StrongFence")
@Label("Strong Fence")
@Category("Fenceline")
@Description("A strong fence's remote flush of the lanes that carried earlier work completed")
@StackTrace(false)
public final class StrongFenceEvent extends jdk.jfr.Event {
    /** The endpoint's name. */
    @Label("Endpoint")
    public String endpoint;

    /** The epoch it enforced. */
    @Label("Epoch")
    public long epoch;

    /** From its start to the last lane flush's answer. */
    @Label("Took")
    @Timespan(Timespan.NANOSECONDS)
    public long took;
}
