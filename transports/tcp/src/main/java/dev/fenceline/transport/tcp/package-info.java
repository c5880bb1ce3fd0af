/**
 * The {@code tcp} transport: lanes over TCP connections on Netty (native epoll where available),
 * one per network rail, with mutual shared-secret authentication at wireup and software RMA,
 * atomics and active messages that the target applies exactly once. See docs/transports.md.
 */
package dev.fenceline.transport.tcp;
