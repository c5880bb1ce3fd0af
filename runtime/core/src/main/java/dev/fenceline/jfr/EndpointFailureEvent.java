package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** An endpoint failed: its requests completed with errors and it takes no more. */
@Name("dev.fenceline.EndpointFailure")
@Label("Endpoint Failure")
@Category("Fenceline")
@Description("An endpoint failed (its last lane, or a lane failure in an error mode without failover)")
@StackTrace(false)
public final class EndpointFailureEvent extends jdk.jfr.Event {
    /** The endpoint's name. */
    @Label("Endpoint")
    public String endpoint;

    /** Why. */
    @Label("Cause")
    public String cause;
}
