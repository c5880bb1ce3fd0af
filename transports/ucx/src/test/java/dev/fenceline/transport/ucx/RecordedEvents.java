package dev.fenceline.transport.ucx;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.agrona.DirectBuffer;

/** What a worker's drain reported, kept for the UCX tests to check. */
final class RecordedEvents implements UctEventHandler {
    /** Completions by token: {status, value}. */
    final Map<Long, long[]> completions = new HashMap<>();
    /** Active messages as "id:bytes" (ISO-8859-1). */
    final List<String> messages = new ArrayList<>();
    /** How many active messages came (readable from another thread). */
    volatile int messageCount;
    final List<Long> ready = new ArrayList<>();
    /** The statuses endpoint failures came with. */
    final List<Integer> failures = new ArrayList<>();

    @Override
    public void completed(long token, int status, long value) {
        completions.put(token, new long[] {status, value});
    }

    @Override
    public void activeMessage(long iface, int id, DirectBuffer data, int offset, int length) {
        byte[] b = new byte[length];
        data.getBytes(offset, b);
        messages.add(id + ":" + new String(b, StandardCharsets.ISO_8859_1));
        messageCount++;
    }

    @Override
    public void ready(long token) {
        ready.add(token);
    }

    @Override
    public void endpointFailed(long endpoint, int status) {
        failures.add(status);
    }

    /**
     * An operation's outcome is success: done at once, or in progress and then completed well.
     *
     * @param status what starting it returned
     * @param token its token
     */
    void succeeded(UctWorker w, int status, long token) {
        int outcome = status == UctStatus.IN_PROGRESS ? (int) await(w, token)[0] : status;
        if (outcome != UctStatus.OK) {
            throw new AssertionError("operation " + token + " ended with " + outcome + " (" + UctStatus.describe(outcome)
                    + ")");
        }
    }

    /**
     * Progresses the worker until the token's completion comes, and forgets it.
     *
     * @return {status, value}
     */
    long[] await(UctWorker w, long token) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!completions.containsKey(token)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion for token " + token);
            }
            w.progress();
            w.drain(this);
        }
        return completions.remove(token);
    }
}
