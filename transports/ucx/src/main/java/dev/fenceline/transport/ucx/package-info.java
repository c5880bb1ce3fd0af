/**
 * The {@code ucx} transport: UCX's transport layer, UCT, through a small native library compiled
 * against the installed headers and bound with jnr-ffi. One lane per UCT endpoint, on shared memory
 * (posix, sysv, cma), tcp and, where the host has them, RDMA adapters (rc, dc, ud); a progress agent
 * is the only thread that touches UCT, and a control actor owns wireup, peer liveness and cleanup.
 * See docs/transports.md.
 */
package dev.fenceline.transport.ucx;
