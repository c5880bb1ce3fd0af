/**
 * Fenceline's JFR events, recorded with no extra dependency (start a recording with
 * {@code -XX:StartFlightRecording} or {@code jcmd PID JFR.start}): {@code dev.fenceline.LaneFailover},
 * {@code dev.fenceline.LaneChange} (replaced, recovered, added), {@code dev.fenceline.EndpointFailure},
 * {@code dev.fenceline.StrongFence}, {@code dev.fenceline.Replay}, {@code dev.fenceline.Connect} and
 * {@code dev.fenceline.SlowHandler}.
 * Each is in the category "Fenceline"; its fields are documented on its class.
 */
package dev.fenceline.jfr;
