package dev.fenceline.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * Faults for peers in processes of their own (Linux): stop one as a debugger, a GC pause or a
 * swapped-out host would, and resume it. A stop takes effect thread by thread, after {@code kill}
 * returns; {@link #stop} waits until every thread of the process is stopped, so nothing a test
 * sends afterwards can be taken by the peer before {@link #resume}.
 */
public final class ProcessFaults {
    private ProcessFaults() {
    }

    /**
     * Sends SIGSTOP and waits until every thread of the process is stopped.
     *
     * @param p the peer's process
     * @param within how long the stop may take
     * @throws IOException if {@code kill} fails or the process is not stopped in time
     * @throws InterruptedException if interrupted while waiting
     */
    public static void stop(Process p, Duration within) throws IOException, InterruptedException {
        signal(p, "STOP");
        long until = System.nanoTime() + within.toNanos();
        while (!allStopped(p.pid())) {
            if (System.nanoTime() > until) {
                throw new IOException("process " + p.pid() + " was sent SIGSTOP but not every thread stopped within "
                        + within);
            }
            Thread.sleep(1); // a test's thread, never an actor
        }
    }

    /**
     * Sends SIGCONT.
     *
     * @param p the peer's process
     * @throws IOException if {@code kill} fails
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static void resume(Process p) throws IOException, InterruptedException {
        signal(p, "CONT");
    }

    /**
     * Kills the process (SIGKILL) and waits up to 10 s for it to be gone, for {@code close()} of a
     * test's forked peer; an interrupt is kept for the caller.
     *
     * @param p the process
     */
    public static void kill(Process p) {
        p.destroyForcibly();
        try {
            p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void signal(Process p, String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).inheritIO().start();
        if (!kill.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + name + " " + p.pid() + " failed");
        }
    }

    /** @return whether every thread of the process is in state T (stopped) or t (traced) */
    private static boolean allStopped(long pid) throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"));
                } catch (IOException ended) {
                    continue; // a thread that ended meanwhile
                }
                // The command (field 2) is in parentheses and may hold spaces: the state follows it.
                char state = stat.charAt(stat.lastIndexOf(')') + 2);
                if (state != 'T' && state != 't') {
                    return false;
                }
            }
        }
        return true;
    }
}
