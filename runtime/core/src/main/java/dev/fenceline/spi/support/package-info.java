/**
 * What transports share beyond the contract in {@link dev.fenceline.spi}: the target-side
 * exactly-once apply ({@link dev.fenceline.spi.support.ExactlyOnce} over
 * {@link dev.fenceline.spi.support.DedupWindow}), the wire codes of atomics and errors, a
 * configuration reader that names bad keys, connection ids, the thread-local hand-over of
 * request traces, and the loading of a native library a transport's jar carries
 * ({@link dev.fenceline.spi.support.BundledLibrary}). A transport may use them; the contract does not need them.
 */
package dev.fenceline.spi.support;
