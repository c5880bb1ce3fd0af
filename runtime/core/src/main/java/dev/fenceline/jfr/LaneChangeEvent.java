package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A transport replaced, recovered or added a lane of an endpoint. */
@Name("dev.fenceline.LaneChange")
@Label("Lane Change")
@Category("Fenceline")
@Description("A new connection behind a lane: replaced (a transparent reconnect), recovered (a failed lane), or added")
@StackTrace(false)
public final class LaneChangeEvent extends jdk.jfr.Event {
    /** The endpoint's name. */
    @Label("Endpoint")
    public String endpoint;

    /** The slot. */
    @Label("Lane")
    public int lane;

    /** replaced, recovered or added. */
    @Label("Change")
    public String change;

    /** The new connection's transport. */
    @Label("Transport")
    public String transport;
}
