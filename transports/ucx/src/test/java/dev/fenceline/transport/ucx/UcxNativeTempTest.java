package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Loading the native library leaves nothing in the temporary directory (each JVM left one behind). */
class UcxNativeTempTest {
    @Test
    void loadingTheLibraryLeavesNoTemporaryDirectory() throws Exception {
        UcxNative.unavailabilityCause(); // loaded (or refused) by now
        long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> entries = Files.list(tmp)) {
            List<Path> mine = entries.filter(p -> p.getFileName().toString().startsWith("fenceline-uct"))
                    .filter(p -> created(p) >= jvmStart).toList();
            assertEquals(List.of(), mine, "made since this JVM started, and left");
        }
    }

    private static long created(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class).creationTime().toMillis();
        } catch (java.io.IOException e) {
            return Long.MIN_VALUE; // gone meanwhile: not left behind
        }
    }
}
