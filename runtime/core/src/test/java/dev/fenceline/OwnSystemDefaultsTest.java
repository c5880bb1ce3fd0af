package dev.fenceline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The runtime's own actor system ticks every 20 ms unless the user chose a tick. */
class OwnSystemDefaultsTest {
    private static final String TICK = "pekko.scheduler.tick-duration";

    @Test
    void pekkosDefaultTickIsReplacedAndAUsersTickIsKept() {
        assertEquals(Duration.ofMillis(20),
                Fenceline.ownSystemDefaults(ConfigFactory.load()).getDuration(TICK), "Pekko's 10 ms default");
        assertEquals(Duration.ofMillis(20),
                Fenceline.ownSystemDefaults(ConfigFactory.defaultReference()).getDuration(TICK));
        assertEquals(Duration.ofMillis(5), Fenceline.ownSystemDefaults(
                ConfigFactory.parseString(TICK + " = 5ms").withFallback(ConfigFactory.load()).resolve())
                .getDuration(TICK), "the user's own");
    }
}
