package dev.fenceline.transport.ucx;

import jnr.ffi.annotations.Out;

/**
 * The one function of libucp this module calls: the loaded UCX's version (libuct and libucs export
 * none), checked against the headers the native library was compiled with. Public at the
 * class-file level for jnr-ffi's generated implementation; not part of the module's API.
 */
public interface Ucp {
    /**
     * @param major out: the major version
     * @param minor out: the minor version
     * @param release out: the release
     */
    void ucp_get_version(@Out int[] major, @Out int[] minor, @Out int[] release);
}
