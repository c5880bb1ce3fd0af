/**
 * Tests across processes: a worker forked into a process of its own ({@link
 * dev.fenceline.testkit.process.PeerWorkerProcess}, running {@link dev.fenceline.testkit.process.PeerWorker})
 * and a seeded, model-checked workload against it ({@link dev.fenceline.testkit.process.MixedWorkload});
 * and test hosts: two network namespaces joined by veth rails ({@link dev.fenceline.testkit.process.Netns})
 * with a fenced, verified stream between worker processes in them ({@link
 * dev.fenceline.testkit.process.RailOrigin}, running {@link dev.fenceline.testkit.process.RailPeer}), for
 * rail-failover tests of any transport.
 */
package dev.fenceline.testkit.process;
