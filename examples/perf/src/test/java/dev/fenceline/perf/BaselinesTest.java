package dev.fenceline.perf;

import static dev.fenceline.perf.PerfRuns.run;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code --baseline}: the floors it measures beside shm, and beside tcp in the mode the run's threads are in. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BaselinesTest {
    /** shm's floors: a copy and a two-thread ping-pong at each size, fetch-adds on a word, each measured. */
    @Test
    void shmBaselineMeasuresItsFloors() {
        String json = run("--transport", "shm", "--tests", "put_lat", "--sizes", "8,20", "-n", "2000", "-w", "200",
                "--json", "--baseline");
        for (String size : new String[] {"8", "20"}) { // 20: the sequence number's word is not its last 8 bytes
            assertTrue(json.contains("\"test\":\"memcpy\",\"transport\":\"memcpy\",\"size\":" + size), json);
            Matcher lat = Pattern.compile("\"test\":\"core_lat\",\"transport\":\"memory\",\"size\":" + size
                    + ",\"iterations\":2000,.*?\"p50_us\":([0-9.]+),\"p99_us\":([0-9.]+)").matcher(json);
            assertTrue(lat.find(), "core_lat at " + size + " missing in " + json);
            double p50 = Double.parseDouble(lat.group(1));
            assertTrue(p50 > 0 && Double.parseDouble(lat.group(2)) >= p50, lat.group());
        }
        Matcher atomics = Pattern.compile("\"test\":\"atomic_mr\",\"transport\":\"memory\",\"size\":8,"
                + "\"iterations\":2000,.*?\"rate\":([0-9.]+)").matcher(json);
        assertTrue(atomics.find(), "atomic_mr missing in " + json);
        assertTrue(Double.parseDouble(atomics.group(1)) > 0, atomics.group());
    }

    /** Beside pollers that run the I/O, the raw Netty floor's loops spin too (where there are two CPUs). */
    @Test
    void theFloorSpinsBesideSpinningThreads() {
        String json = run("--transport", "tcp", "--tests", "put_lat", "--sizes", "8", "-n", "200", "-w", "20",
                "--caller-progress", "--json", "--baseline");
        String floor = Runtime.getRuntime().availableProcessors() >= 2 && io.netty.channel.epoll.Epoll.isAvailable()
                ? "raw-netty-spin" : "raw-netty";
        assertTrue(json.contains("\"test\":\"pingpong_lat\",\"transport\":\"" + floor + "\""), json);
        String plain = run("--transport", "tcp", "--tests", "put_lat", "--sizes", "8", "-n", "200", "-w", "20",
                "--json", "--baseline");
        assertTrue(plain.contains("\"test\":\"pingpong_lat\",\"transport\":\"raw-netty\""), plain);
    }
}
