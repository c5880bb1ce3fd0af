package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A JVM of its own for a test's main class: this JVM's java, the runtime's export, a class path. */
final class ChildJvm {
    private ChildJvm() {
    }

    /**
     * @param classPath the child's class path (this JVM's, usually)
     * @param flags JVM flags before the class path
     * @param main the main class
     * @param args its arguments
     * @return the command, not started
     */
    static ProcessBuilder command(String classPath, List<String> flags, Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"));
        cmd.addAll(flags);
        cmd.addAll(List.of("-cp", classPath, main.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    /** @return the command for {@code main} on this JVM's class path, with no other flags */
    static ProcessBuilder command(Class<?> main, String... args) {
        return command(System.getProperty("java.class.path"), List.of(), main, args);
    }

    /**
     * Runs it to its end, its error stream merged into its output.
     *
     * @return its output, once it exited 0 within 60 s (else the test fails, showing it)
     */
    static String output(ProcessBuilder pb) throws Exception {
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
