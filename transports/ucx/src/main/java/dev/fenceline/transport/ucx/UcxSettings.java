package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import dev.fenceline.spi.support.ConfigReader;
import dev.fenceline.spi.support.ReconnectPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * {@code fenceline.transport.ucx}, read and validated once (reference.conf documents each key).
 *
 * @param tls the UCT transports and aliases, in order of preference
 * @param devices the network devices, or [all]
 * @param connectToEndpoint whether transports that can connect either way connect endpoint to endpoint
 * @param maxFragment the largest payload of one operation
 * @param queueDepth unanswered operations per lane
 * @param connectTimeout how long a connect may take
 * @param livenessInterval how often peer processes are checked, and greetings repeated
 * @param idleStrategy backoff, yield, busy-spin or sleep
 * @param idleParkMin the backoff strategy's shortest park
 * @param idleParkMax the backoff strategy's longest park, and the sleep strategy's park
 * @param maxRegistrations key-table slots
 * @param quarantine how long a closed region's memory and slot are kept
 * @param maxLanesPerPeer connection ids one peer may hold here
 * @param reconnect how a lane the endpoint gave up, but still wants, is reconnected
 * @param keysRead every key read, for the completeness test
 */
record UcxSettings(List<String> tls, List<String> devices, boolean connectToEndpoint, int maxFragment, int queueDepth,
        Duration connectTimeout, Duration livenessInterval, String idleStrategy, Duration idleParkMin,
        Duration idleParkMax, int maxRegistrations, Duration quarantine, int maxLanesPerPeer,
        ReconnectPolicy reconnect, Set<String> keysRead) {
    static final String SECTION = "fenceline.transport.ucx";

    static UcxSettings fromSection(Config section) {
        ConfigReader r = new ConfigReader(section.atPath(SECTION), SECTION);
        List<String> tls = List.copyOf(r.stringList("tls"));
        List<String> devices = List.copyOf(r.stringList("devices"));
        if (tls.isEmpty()) {
            throw r.invalid("tls", "[]", "at least one UCT transport or alias");
        }
        if (devices.isEmpty()) {
            throw r.invalid("devices", "[]", "at least one device, or [all]");
        }
        boolean toEndpoint = r.oneOf("connect", List.of("iface", "endpoint")).equals("endpoint");
        int maxFragment = (int) r.bytesIn("max-fragment", 1 << 10, 64 << 20);
        int queueDepth = r.intIn("queue-depth", 1, 65536);
        Duration connect = r.durationIn("connect-timeout", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration liveness = r.durationIn("liveness-interval", Duration.ofMillis(1), Duration.ofMinutes(1));
        String idle = r.oneOf("idle-strategy", List.of("backoff", "yield", "busy-spin", "sleep"));
        Duration parkMin = r.durationIn("idle-park-min", Duration.ofNanos(1), Duration.ofMillis(1));
        Duration parkMax = r.durationIn("idle-park-max", parkMin, Duration.ofSeconds(1));
        int registrations = r.intIn("max-registrations", 1, 1 << 20);
        Duration quarantine = r.durationIn("registration-quarantine", Duration.ofMillis(1), Duration.ofMinutes(10));
        int lanes = r.intIn("max-lanes-per-peer", 1, 1 << 20);
        Duration minBackoff = r.durationIn("reconnect.min-backoff", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration maxBackoff = r.durationIn("reconnect.max-backoff", minBackoff, Duration.ofMinutes(10));
        Duration giveUp = r.durationIn("reconnect.give-up-after", Duration.ofSeconds(1), Duration.ofDays(7));
        Duration stable = r.durationIn("reconnect.stable-after", Duration.ofMillis(1), Duration.ofHours(1));
        return new UcxSettings(tls, devices, toEndpoint, maxFragment, queueDepth, connect, liveness, idle, parkMin,
                parkMax, registrations, quarantine, lanes, new ReconnectPolicy(minBackoff, maxBackoff, giveUp, stable),
                r.keysRead());
    }
}
