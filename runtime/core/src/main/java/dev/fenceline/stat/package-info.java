/**
 * Reading the counters that running Fenceline processes publish (setting {@code fenceline.stat}),
 * from outside those processes: what {@code fenceline stat} prints. {@link dev.fenceline.stat.StatFile#list}
 * finds the files in a directory, {@link dev.fenceline.stat.StatFile#open} maps one read-only and
 * checks its header, {@link dev.fenceline.stat.StatFile#read} takes a snapshot of its counters.
 */
package dev.fenceline.stat;
