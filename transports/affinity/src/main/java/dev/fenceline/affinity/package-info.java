/**
 * Which CPUs a thread may run on: the native transports keep their polling or progress thread to
 * the CPUs a deployment names, since two such threads that share a core wait for each other's
 * spinning. Linux only, through jnr-ffi. See docs/transports.md.
 */
package dev.fenceline.affinity;
