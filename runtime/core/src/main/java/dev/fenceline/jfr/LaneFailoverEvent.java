package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A lane failed and its endpoint went on without it. */
@Name("dev.fenceline.LaneFailover")
@Label("Lane Failover")
@Category("Fenceline")
@Description("A lane of an endpoint failed; the endpoint restarts what it had not finished on its other lanes")
@StackTrace(false)
public final class LaneFailoverEvent extends jdk.jfr.Event {
    /** The endpoint's name. */
    @Label("Endpoint")
    public String endpoint;

    /** The failed slot. */
    @Label("Lane")
    public int lane;

    /** The failed connection's transport. */
    @Label("Transport")
    public String transport;

    /** Why, as the transport or keepalive said. */
    @Label("Cause")
    public String cause;

    /** Live lanes left. */
    @Label("Live Lanes Left")
    public int liveLanes;
}
