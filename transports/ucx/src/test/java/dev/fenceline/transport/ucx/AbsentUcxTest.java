package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where UCX cannot be loaded (here: a ucx jar built without the native library, as on a host
 * without UCX's headers), the transport says why, a list that names it runs on the others, and a list
 * of nothing else is refused with the cause. Runs in a JVM of its own, whose class path has the
 * module's classes without the library.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AbsentUcxTest {
    @TempDir
    Path dir;

    @Test
    void theTransportSaysWhyAndTheOthersServe() throws Exception {
        Path classes = Path.of("target", "classes").toAbsolutePath();
        Path copy = dir.resolve("classes");
        copyWithoutNative(classes, copy);
        List<String> path = new ArrayList<>();
        for (String p : System.getProperty("java.class.path").split(File.pathSeparator)) {
            path.add(Path.of(p).toAbsolutePath().equals(classes) ? copy.toString() : p);
        }
        assertTrue(path.contains(copy.toString()), "the module's classes are on the class path: " + path);
        String out = ChildJvm.output(ChildJvm.command(String.join(File.pathSeparator, path), List.of(),
                AbsentUcxMain.class));
        assertTrue(out.contains("CAUSE this build of the ucx transport has no native library"), out);
        assertTrue(out.contains("TRANSPORTS [tcp]"), out);
        assertTrue(out.contains("fenceline.transports names ucx, which cannot run in this process"), out);
        assertTrue(out.contains("PUT 42 over tcp"), out);
        assertTrue(out.contains("ALONE fenceline.transports = [ucx], but none of them can run in this process;"
                + " ucx: this build of the ucx transport has no native library"), out);
    }

    private static void copyWithoutNative(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                Path rel = from.relativize(f);
                if (rel.toString().contains("native")) {
                    continue;
                }
                Path t = to.resolve(rel.toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t);
                }
            }
        }
    }
}
