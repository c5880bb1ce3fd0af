/**
 * The {@code sim} transport: in-process, seeded, with one delivery delay range per lane. Operations
 * are applied to the target worker's real memory when the simulated network delivers them, in post
 * order within a lane and in any order across lanes, so fences and flushes are meaningful.
 */
package dev.fenceline.transport.sim;
