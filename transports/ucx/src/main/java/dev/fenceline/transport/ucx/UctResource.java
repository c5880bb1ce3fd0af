package dev.fenceline.transport.ucx;

/**
 * One UCT resource: a transport on a device, reached through a memory domain of a component, as
 * {@code ucx_info -d} lists them.
 *
 * @param component the component ({@code posix}, {@code tcp}, {@code ib}, ...)
 * @param memoryDomain the memory domain ({@code posix}, {@code mlx5_0}, ...)
 * @param transport the transport ({@code posix}, {@code tcp}, {@code rc_mlx5}, ...)
 * @param device the device ({@code memory}, {@code lo}, {@code mlx5_0:1}, ...)
 * @param deviceType {@code net}, {@code shm}, {@code acc}, {@code self} or {@code other}
 */
public record UctResource(String component, String memoryDomain, String transport, String device,
        String deviceType) {
    String spec() {
        return component + "\t" + memoryDomain + "\t" + transport + "\t" + device;
    }

    @Override
    public String toString() {
        return transport + "/" + device;
    }
}
