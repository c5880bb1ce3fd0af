package dev.fenceline.spi.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who is who on this host, for transports whose peers are processes on it (shared memory, cross-memory
 * attach): the boot id (processes on another boot, or another host, share no memory with us), this
 * process's pid, and process start times (a pid alone can be reused, a pid with its start time
 * cannot). Linux only: elsewhere the identities read {@code unknown} and no process is alive.
 */
public final class Host {
    private static final String BOOT_ID = read(Path.of("/proc/sys/kernel/random/boot_id"));
    private static final long PID = ProcessHandle.current().pid();
    private static final long START = startTime(PID);
    private static final String PID_NAMESPACE = pidNamespace();

    private Host() {
    }

    /**
     * @return this process's PID namespace ({@code pid:[inode]}): pids (and so liveness checks and
     *     cross-memory attach) mean something only between processes of the same namespace
     */
    public static String pidNamespaceId() {
        return PID_NAMESPACE;
    }

    private static String pidNamespace() {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return "unknown";
        }
    }

    /** @return this boot's id, {@code unknown} where the kernel does not say */
    public static String bootId() {
        return BOOT_ID;
    }

    /** @return this process's pid */
    public static long pid() {
        return PID;
    }

    /** @return this process's start time, in clock ticks since boot */
    public static long startTime() {
        return START;
    }

    /**
     * @param pid a process id
     * @param start the start time it had (clock ticks since boot)
     * @return whether process {@code pid} exists and started at {@code start}
     */
    public static boolean alive(long pid, long start) {
        return startTime(pid) == start;
    }

    /**
     * @param pid a process id
     * @return field 22 of /proc/PID/stat (start time in clock ticks since boot), or -1 if there is
     *     no such process
     */
    public static long startTime(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return -1;
        }
        // The command name (field 2) is in parentheses and may contain spaces: count from after it.
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 > stat.length()) {
            return -1;
        }
        String[] rest = stat.substring(close + 2).split(" ");
        // rest[0] is field 3 (state): a zombie has exited, whatever its table entry says.
        if (rest.length <= 19 || rest[0].equals("Z") || rest[0].equals("X")) {
            return -1;
        }
        try {
            return Long.parseLong(rest[19]); // field 22
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
