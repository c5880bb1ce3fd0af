/**
 * What transports share beyond the contract in {@link dev.fenceline.spi}: the target-side
 * exactly-once apply ({@link dev.fenceline.spi.support.ExactlyOnce} over
 * {@link dev.fenceline.spi.support.DedupWindow}), the wire codes of atomics and errors, a
 * configuration reader that names bad keys, connection ids, and the thread-local hand-over of
 * request traces. A transport may use them; the contract does not need them.
 */
package dev.fenceline.spi.support;
