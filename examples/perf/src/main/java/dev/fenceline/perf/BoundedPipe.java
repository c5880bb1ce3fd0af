package dev.fenceline.perf;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A target process's answers (its standard output), each read within a bound: a pipe has no read
 * timeout of its own, and a child that stops answering without exiting (hung in a native call, or
 * deadlocked) would hold the driver for ever. While nothing is there to read it looks at the pipe
 * every millisecond; the driver reads only a few lines a run, none while it measures. The end of
 * the stream is seen once the process has exited and its output is read; a child that closes its
 * output and runs on costs the whole bound.
 */
final class BoundedPipe extends InputStream {
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final InputStream in;
    private final Process process;
    private final long timeoutMs;

    /**
     * @param process the child whose standard output this reads
     * @param timeoutMs how long one read waits for a byte
     */
    BoundedPipe(Process process, long timeoutMs) {
        this.in = process.getInputStream();
        this.process = process;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public int read() throws IOException {
        return awaitBytes() > 0 ? in.read() : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        int ready = awaitBytes();
        return ready > 0 ? in.read(b, off, Math.min(len, ready)) : -1;
    }

    /**
     * @return the bytes readable without blocking, or 0 once the process has ended and left nothing
     *     more (the end of the stream: a read of the pipe then could wait on a descendant that holds
     *     its other end)
     * @throws InterruptedIOException if nothing came within the bound, or the thread was interrupted
     */
    private int awaitBytes() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int ready;
        while ((ready = in.available()) == 0) {
            if (!process.isAlive()) {
                return in.available(); // what it wrote before it ended, if that came in since the look
            }
            if (System.nanoTime() - deadline > 0) {
                throw new InterruptedIOException("the target process (pid " + process.pid() + ") answered nothing"
                        + " within " + timeoutMs + " ms");
            }
            LockSupport.parkNanos(POLL_NANOS);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for the target process (pid "
                        + process.pid() + ")");
            }
        }
        return ready;
    }

    @Override
    public int available() throws IOException {
        return in.available();
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
