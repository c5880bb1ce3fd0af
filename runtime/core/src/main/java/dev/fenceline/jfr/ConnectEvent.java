package dev.fenceline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** An endpoint connected its lanes, or failed to. Its duration is the connect. */
@Name("dev.fenceline.Connect")
@Label("Connect")
@Category("Fenceline")
@Description("An endpoint's lanes were connected (or the connect failed)")
@StackTrace(false)
public final class ConnectEvent extends jdk.jfr.Event {
    /** The endpoint's name. */
    @Label("Endpoint")
    public String endpoint;

    /** The peer worker's name. */
    @Label("Peer")
    public String peer;

    /** Lanes connected (0 if it failed). */
    @Label("Lanes")
    public int lanes;

    /** Why it failed, or null. */
    @Label("Failure")
    public String failure;
}
