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

    /** How long this call of the handler ran, at most: no more than {@link #resolution} over it. */
    @Label("Took")
    @Timespan(Timespan.NANOSECONDS)
    public long took;

    /**
     * How much {@link #took} may exceed what the call ran: calls are dated by a watchdog's looks, not
     * by a clock read per call (from the look before the one that found it running to the clock read
     * when it was found).
     */
    @Label("Resolution")
    @Timespan(Timespan.NANOSECONDS)
    public long resolution;

    /** The configured bound it went over. */
    @Label("Bound")
    @Timespan(Timespan.NANOSECONDS)
    public long bound;
}
