/**
 * Tests across processes: a worker forked into a process of its own ({@link
 * dev.fenceline.testkit.process.PeerWorkerProcess}, running {@link dev.fenceline.testkit.process.PeerWorker})
 * and a seeded, model-checked workload against it ({@link dev.fenceline.testkit.process.MixedWorkload}).
 */
package dev.fenceline.testkit.process;
