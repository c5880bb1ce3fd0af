package dev.fenceline.transport.shm;

import com.typesafe.config.Config;
import dev.fenceline.affinity.CpuAffinity;
import dev.fenceline.spi.support.ConfigReader;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * {@code fenceline.transport.shm}, read and validated once (reference.conf documents each key).
 *
 * @param directory where segments live
 * @param sealedSegments whether segments are sealed memfds (and only sealed ones are mapped), or plain files
 * @param nativeCopyFrom puts into a peer's sealed segment of this many bytes and more take the native copy;
 *     {@code Integer.MAX_VALUE}: none does ({@code native-copy = off})
 * @param ringSize bytes of each inbox ring
 * @param maxFragment largest payload through the ring
 * @param queueDepth unanswered ring operations per lane
 * @param idleStrategy doorbell, backoff, yield, busy-spin or sleep
 * @param idleParkMin the shortest park of the backoff strategy
 * @param idleParkMax the longest park of the backoff strategy, and the sleep strategy's park
 * @param connectTimeout connecting to a peer
 * @param livenessInterval how often peers' processes are checked
 * @param cma whether to offer the cross-memory-attach lane where it works
 * @param maxRegistrations key-table slots for registered regions
 * @param maxLanes gate slots for ring lanes
 * @param maxPeers peer workers' control segments this worker maps at once
 * @param quarantine how long a closed registration's memory and slot are kept
 * @param unblockAfter how long a stuck inbox waits, after some producer died, before it is unblocked
 * @param maxBacklog bytes of replies held for one peer worker whose inbox is full
 * @param pollingCpus the CPUs the polling thread may run on ({@link CpuAffinity}); empty: the process's
 * @param keysRead every key read, for the completeness test
 */
record ShmSettings(Path directory, boolean sealedSegments, int nativeCopyFrom, int ringSize, int maxFragment, int queueDepth, String idleStrategy,
        Duration idleParkMin, Duration idleParkMax, Duration connectTimeout, Duration livenessInterval, boolean cma, int maxRegistrations,
        int maxLanes, int maxPeers, Duration quarantine, Duration unblockAfter, long maxBacklog, List<Integer> pollingCpus,
        Set<String> keysRead) {
    static final String SECTION = "fenceline.transport.shm";

    /**
     * @return a new idle strategy of {@link #idleStrategy()}'s kind (doorbell waits as backoff does
     *     between its sleeps on the doorbell)
     */
    IdleStrategy idler() {
        return switch (idleStrategy) {
            case "busy-spin" -> new BusySpinIdleStrategy();
            case "yield" -> new YieldingIdleStrategy();
            case "sleep" -> new SleepingIdleStrategy(idleParkMax.toNanos());
            default -> new BackoffIdleStrategy(100, 10, idleParkMin.toNanos(),
                    idleParkMax.toNanos());
        };
    }

    /** @return {@link #quarantine()} in nanoseconds */
    long registrationQuarantineNanos() {
        return quarantine.toNanos();
    }
    /** Room for a message's own header fields inside a ring record. */
    static final int MESSAGE_OVERHEAD = 128;
    /**
     * The smallest ring a worker makes, and so the smallest a peer's inbox may have: its largest
     * message (an eighth) holds any reply but a get's data, and any wireup message.
     */
    static final int MIN_RING_SIZE = 64 << 10;

    static ShmSettings fromSection(Config section) {
        ConfigReader r = new ConfigReader(section.atPath(SECTION), SECTION);
        String dir = r.string("directory").trim();
        Path directory;
        try {
            directory = Path.of(dir);
        } catch (java.nio.file.InvalidPathException e) {
            throw r.invalid("directory", dir, "an absolute path (" + e.getReason() + ")");
        }
        if (!directory.isAbsolute()) { // "" would be the working directory, on whatever disk that is
            throw r.invalid("directory", dir, "an absolute path, of a memory file system such as /dev/shm");
        }
        boolean sealed = r.oneOf("segments", List.of("sealed", "files")).equals("sealed");
        boolean nativeCopy = r.oneOf("native-copy", List.of("auto", "off")).equals("auto");
        int nativeFrom = (int) r.bytesIn("native-copy-from", 4 << 10, 1 << 30);
        if (!nativeCopy) {
            nativeFrom = Integer.MAX_VALUE;
        }
        long ring = r.bytesIn("ring-size", MIN_RING_SIZE, 1L << 30);
        if (Long.bitCount(ring) != 1) {
            throw r.invalid("ring-size", Long.toString(ring), "a power of two");
        }
        int maxFragment = (int) r.bytesIn("max-fragment", 1 << 10, 128 << 20);
        if (maxFragment > ring / 8 - MESSAGE_OVERHEAD) {
            throw r.invalid("max-fragment", Integer.toString(maxFragment), "at most ring-size / 8 - "
                    + MESSAGE_OVERHEAD + " = " + (ring / 8 - MESSAGE_OVERHEAD) + " (the ring's largest message)");
        }
        int queueDepth = r.intIn("queue-depth", 1, 65536);
        String idle = r.oneOf("idle-strategy", List.of("doorbell", "backoff", "yield", "busy-spin", "sleep"));
        Duration parkMin = r.durationIn("idle-park-min", Duration.ofNanos(1), Duration.ofMillis(1));
        Duration parkMax = r.durationIn("idle-park-max", parkMin, Duration.ofSeconds(1));
        Duration connect = r.durationIn("connect-timeout", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration liveness = r.durationIn("liveness-interval", Duration.ofMillis(1), Duration.ofMinutes(1));
        boolean cma = r.oneOf("cma", List.of("auto", "off")).equals("auto");
        int registrations = r.intIn("max-registrations", 1, 1 << 20);
        int lanes = r.intIn("max-lanes", 1, 1 << 20);
        int peers = r.intIn("max-peers", 1, 1 << 16);
        Duration quarantine = r.durationIn("registration-quarantine", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration unblock = r.durationIn("inbox-unblock-after", Duration.ofMillis(100), Duration.ofHours(1));
        long backlog = r.bytesIn("max-backlog", 1 << 20, 1L << 40);
        if (backlog < (long) maxFragment + MESSAGE_OVERHEAD) { // else the first get answer that waits drops the peer
            throw r.invalid("max-backlog", Long.toString(backlog), "at least max-fragment + " + MESSAGE_OVERHEAD + " = "
                    + ((long) maxFragment + MESSAGE_OVERHEAD) + " (one answer of a get)");
        }
        return new ShmSettings(directory, sealed, nativeFrom, (int) ring, maxFragment, queueDepth, idle, parkMin, parkMax, connect, liveness, cma,
                registrations, lanes, peers, quarantine, unblock, backlog, CpuAffinity.cpusSetting(r, "polling-cpus"),
                r.keysRead());
    }
}
