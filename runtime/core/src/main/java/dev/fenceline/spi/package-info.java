/**
 * The transport SPI: what a backend (shared memory, TCP, UCX, the test kit's simulator) provides to
 * the runtime. Providers are found with {@link java.util.ServiceLoader} and enabled by the
 * {@code fenceline.transports} configuration key. A transport never holds endpoint state: it reports
 * completions, flushes and failures to a {@link dev.fenceline.spi.LaneListener}, which only sends
 * messages to the owning endpoint actor.
 */
package dev.fenceline.spi;
