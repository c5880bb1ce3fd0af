package dev.fenceline.transport.ucx;

/**
 * Whether the JVM is exiting (System.exit, a SIGTERM): the runtime then closes from a shutdown hook
 * while the application's threads still run, and memory UCT allocated for regions those threads may
 * still read is left mapped for the process's end rather than unmapped under them (a read after the
 * unmapping kills the JVM with a SIGSEGV instead of letting it exit).
 */
final class JvmExit {
    private JvmExit() {
    }

    /** @return whether the JVM has begun to exit (shutdown hooks can no longer be added) */
    static boolean underway() {
        Thread probe = new Thread(() -> { });
        try {
            Runtime.getRuntime().addShutdownHook(probe);
            Runtime.getRuntime().removeShutdownHook(probe);
            return false;
        } catch (IllegalStateException shuttingDown) {
            return true;
        }
    }
}
