/**
 * A replicated key-value store on Pekko Cluster, and the cluster demo that kills one of its members
 * mid-run and verifies what the others hold ({@code bin/fenceline cluster-demo}).
 */
package dev.fenceline.examples.cluster;
