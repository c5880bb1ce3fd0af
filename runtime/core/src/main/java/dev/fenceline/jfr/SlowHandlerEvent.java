package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** An active-message handler ran longer than its time bound. */
@Name("dev.fenceline.SlowHandler")
@Label("Slow Handler")
@Category("Fenceline")
@Description("An active-message handler ran longer than fenceline.active-message.handler-time-bound")
@StackTrace(false)
public final class SlowHandlerEvent extends jdk.jfr.Event {
    /** The worker whose handler it is. */
    @Label("Worker")
    public String worker;

    /** The active-message id. */
    @Label("Id")
    public int id;

    /** How long this call of the handler ran. */
    @Label("Took")
    @Timespan(Timespan.NANOSECONDS)
    public long took;

    /** The configured bound it went over. */
    @Label("Bound")
    @Timespan(Timespan.NANOSECONDS)
    public long bound;
}
