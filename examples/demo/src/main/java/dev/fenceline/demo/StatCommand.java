package dev.fenceline.demo;

import dev.fenceline.stat.StatCounter;
import dev.fenceline.stat.StatFile;
import dev.fenceline.stat.StatFileException;
import dev.fenceline.stat.StatValue;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code fenceline stat}: the live counters of Fenceline processes on this host, read from the files
 * they publish (setting {@code fenceline.stat}), refreshed in place like {@code top}.
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
        description = "Prints the live counters of running Fenceline processes on this host: each worker's"
                + " figures and each open endpoint's, from the counters files they publish"
                + " (setting fenceline.stat). Refreshes in place until interrupted; --once prints one snapshot."
                + " Exits 0, or 3 when there is no counters file to read.")
public final class StatCommand implements Callable<Integer> {
    /** Exit code when no process (or not the one asked for) publishes counters. */
    static final int NOTHING_TO_READ = 3;

    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..*", paramLabel = "PID", description = "Processes to show (default: --all).")
    List<Long> pids = new ArrayList<>();

    @Option(names = "--all", description = "Every process that publishes counters in the directory.")
    boolean all;

    @Option(names = "--dir", description = "The counters directory (default: ${DEFAULT-VALUE}).")
    Path directory = StatFile.defaultDirectory();

    @Option(names = "--interval", defaultValue = "1s", converter = DurationConverter.class,
            description = "Time between refreshes, e.g. 500ms, 2s (default ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(names = "--once", description = "Print one snapshot and exit.")
    boolean once;

    @Option(names = "--count", defaultValue = "0",
            description = "Refresh this many times, then exit (0: until interrupted).")
    int count;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (all && !pids.isEmpty()) {
            err.println("fenceline stat: give PIDs or --all, not both");
            return 2;
        }
        if (count < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--count " + count
                    + ": expected 0 (until interrupted) or more");
        }
        boolean clear = !once && System.console() != null;
        int rounds = once ? 1 : count;
        for (int round = 0; rounds == 0 || round < rounds; round++) {
            if (round > 0) {
                TimeUnit.MILLISECONDS.sleep(interval.toMillis());
            }
            List<Path> files;
            try {
                files = files();
            } catch (StatFileException unreadable) { // the directory itself (not there, not ours, no access)
                err.println("fenceline stat: " + unreadable.getMessage());
                return NOTHING_TO_READ;
            }
            if (files.isEmpty()) {
                err.println(pids.isEmpty() ? "fenceline stat: no running Fenceline process publishes counters in "
                        + directory : "fenceline stat: no counters file for process " + pids + " in " + directory);
                return NOTHING_TO_READ;
            }
            StringBuilder screen = new StringBuilder();
            if (clear) {
                screen.append("\033[H\033[2J");
            }
            for (Path f : files) {
                screen.append(render(f));
            }
            out.print(screen);
            out.flush();
        }
        return 0;
    }

    private List<Path> files() {
        List<Path> found = StatFile.list(directory);
        if (pids.isEmpty()) {
            return found;
        }
        return found.stream().filter(p -> pids.stream().anyMatch(pid -> p.getFileName().toString()
                .startsWith(pid + "-"))).toList();
    }

    /** One process's file as two tables: its workers, then its open endpoints. */
    static String render(Path file) {
        StringBuilder b = new StringBuilder();
        try (StatFile f = StatFile.open(file)) {
            List<StatValue> values = f.read();
            // Written by another process: a time out of any range is shown as such, never thrown.
            long updated = f.updated().toEpochMilli();
            long now = System.currentTimeMillis();
            String when = updated > 0 && updated <= now + 60_000
                    ? String.format("updated %.1f s ago", Math.max(0, now - updated) / 1000.0)
                    : "updated at an invalid time (" + updated + " ms)";
            b.append(String.format("pid %d  started %s  %s  (%s)%n", f.pid(), f.started(), when, file));
            table(b, "worker", StatCounter.Scope.WORKER, values);
            table(b, "endpoint", StatCounter.Scope.ENDPOINT, values);
        } catch (StatFileException e) {
            b.append(e.getMessage()).append(System.lineSeparator());
        } catch (RuntimeException | InternalError e) { // a file its writer broke (truncated, absurd header)
            b.append("fenceline stat: ").append(file).append(" cannot be read: ").append(e)
                    .append(System.lineSeparator());
        }
        return b.append(System.lineSeparator()).toString();
    }

    private static void table(StringBuilder b, String heading, StatCounter.Scope scope, List<StatValue> values) {
        List<StatCounter> columns = new ArrayList<>();
        for (StatCounter c : StatCounter.values()) {
            if (c.scope() == scope) {
                columns.add(c);
            }
        }
        Map<String, Map<StatCounter, Long>> rows = new LinkedHashMap<>();
        for (StatValue v : values) {
            if (v.counter().scope() == scope) {
                rows.computeIfAbsent(v.owner(), o -> new EnumMap<>(StatCounter.class)).put(v.counter(), v.value());
            }
        }
        int width = Math.max(heading.length(), rows.keySet().stream().mapToInt(String::length).max().orElse(0));
        String ownerColumn = "  %-" + width + "s";
        b.append(String.format(ownerColumn, heading));
        for (StatCounter c : columns) {
            b.append(String.format(" %14s", c.column()));
        }
        b.append(System.lineSeparator());
        if (rows.isEmpty()) {
            b.append("  (none)").append(System.lineSeparator());
        }
        rows.forEach((owner, row) -> {
            b.append(String.format(ownerColumn, owner));
            for (StatCounter c : columns) {
                Long v = row.get(c);
                b.append(v == null ? String.format(" %14s", "-") : String.format(" %,14d", v));
            }
            b.append(System.lineSeparator());
        });
    }
}
