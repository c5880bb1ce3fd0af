package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A reconfiguration's replay: requests restarted on an endpoint's current lanes. */
@Name("dev.fenceline.Replay")
@Label("Replay")
@Category("Fenceline")
@Description("A lane-table change restarted the requests that had fragments on the changed lanes")
@StackTrace(false)
public final class ReplayEvent extends jdk.jfr.Event {
    /** The endpoint's name. */
    @Label("Endpoint")
    public String endpoint;

    /** Requests restarted. */
    @Label("Restarted")
    public int restarted;

    /** Fragments of connections that left their slots. */
    @Label("Fragments Dropped")
    public int dropped;
}
