package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A target process's answers are read within a bound, and to their end when it exits. */
class BoundedPipeTest {
    private static Process start(String script) throws java.io.IOException {
        return new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
    }

    @Test
    // Without the bound a pipe's read would wait for the child for ever: the test's own limit
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aChildThatStopsAnsweringFailsTheReadWithinTheBound() throws Exception {
        Process p = start("echo 'JIT 12'; exec sleep 60"); // answers once, then hangs
        try {
            BoundedPipe in = new BoundedPipe(p, 200);
            assertEquals("JIT 12", PerfTarget.expect(in, "JIT "));
            long start = System.nanoTime();
            InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> PerfTarget.expect(in,
                    "FLUSH"));
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waitedMs >= 150 && waitedMs < 30_000, "waited " + waitedMs + " ms for a 200 ms bound");
            assertTrue(e.getMessage().contains("pid " + p.pid()) && e.getMessage().contains("200 ms"), e.getMessage());
        } finally {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void whatAnExitedChildWroteIsReadToTheEnd() throws Exception {
        Process p = start("printf 'ADDRESS a b\\nFLUSHED\\nlast'");
        try {
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the child exits");
            BoundedPipe in = new BoundedPipe(p, 60_000); // an ended child: no wait for the bound
            long start = System.nanoTime();
            assertEquals("ADDRESS a b", PerfTarget.readLine(in));
            byte[] rest = new byte[64];
            int n = in.read(rest, 0, rest.length);
            assertEquals("FLUSHED\nlast", new String(rest, 0, n, java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals(-1, in.read());
            assertNull(PerfTarget.readLine(in));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30), "read without waiting for the bound");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anInterruptedWaitEndsAndKeepsTheInterrupt() throws Exception {
        Process p = start("exec sleep 60");
        try {
            BoundedPipe in = new BoundedPipe(p, 60_000);
            Thread.currentThread().interrupt();
            try {
                long start = System.nanoTime();
                InterruptedIOException e = assertThrows(InterruptedIOException.class, in::read);
                assertTrue(e.getMessage().startsWith("interrupted"), e.getMessage());
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "ended by the interrupt, not the"
                        + " bound");
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
            } finally {
                Thread.interrupted(); // cleared for the rest of this thread's tests
            }
        } finally {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
