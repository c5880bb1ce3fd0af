/**
 * Recording what an application did through its endpoints, and checking the record for the
 * guarantees Fenceline gives: every request completes, fences hold, flushes cover what came before,
 * atomics apply exactly once.
 */
package dev.fenceline.testkit.history;
