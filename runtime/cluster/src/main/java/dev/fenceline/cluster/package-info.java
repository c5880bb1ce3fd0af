/**
 * Fenceline on Pekko Cluster: {@link dev.fenceline.cluster.FencelineCluster} advertises workers,
 * looks regions up by name and fails endpoints when their member is downed or removed;
 * {@link dev.fenceline.cluster.FencelineSerializer} carries addresses and keys between members.
 */
package dev.fenceline.cluster;
