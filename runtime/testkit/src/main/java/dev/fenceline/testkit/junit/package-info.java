/** JUnit 5 support: {@link dev.fenceline.testkit.junit.FencelineTest} and its extension. */
package dev.fenceline.testkit.junit;
