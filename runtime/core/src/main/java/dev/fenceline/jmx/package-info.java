/** Fenceline in JMX: the management interfaces of the beans a worker registers (no extra dependency). */
package dev.fenceline.jmx;
