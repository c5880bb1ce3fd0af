package dev.fenceline.micrometer;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointStatistics;
import dev.fenceline.LaneStatistics;
import dev.fenceline.Worker;
import dev.fenceline.WorkerStatistics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * Micrometer meters for one Fenceline worker, its endpoints and their lanes.
 *
 * <pre>{@code
 * FencelineMetrics metrics = new FencelineMetrics(worker);
 * metrics.bindTo(registry);   // and metrics.close() when the worker closes
 * }</pre>
 *
 * <p>Worker meters (tag {@code worker}): counters {@code fenceline.operations} (tag {@code outcome}:
 * issued, completed, failed), {@code fenceline.flushes}, {@code fenceline.fences.strong},
 * {@code fenceline.reconfigurations}, {@code fenceline.restarts}, {@code fenceline.fastpath}; gauges
 * {@code fenceline.operations.outstanding} and {@code fenceline.endpoints.open}, read from
 * {@link Worker#statistics()} when the registry asks. Endpoint meters (tags {@code worker},
 * {@code endpoint}, {@code peer}): {@code fenceline.endpoint.operations},
 * {@code fenceline.endpoint.outstanding}, {@code fenceline.endpoint.flush.p99} and
 * {@code fenceline.endpoint.fence.p99} (seconds). Lane meters (tags {@code worker},
 * {@code endpoint}, {@code lane}, {@code transport}): {@code fenceline.lane.live} (1 or 0),
 * {@code fenceline.lane.bytes}, {@code fenceline.lane.operations}, {@code fenceline.lane.failovers},
 * {@code fenceline.lane.parks}. Endpoints come and go, so their meters are refreshed on a timer
 * (every 10 seconds by default, and at bind). {@link #close()} takes every meter out of the
 * registries it was bound to: a worker made again under the same name gets meters of its own if
 * the old worker's binder was closed before the new one was bound (until then, Micrometer hands
 * the new binder the old one's meters, which read the old worker).
 */
public final class FencelineMetrics implements MeterBinder, AutoCloseable {
    private final Worker worker;
    private final Duration refresh;
    private final List<EndpointGauge> endpointGauges = new ArrayList<>();
    private final List<LaneGauge> laneGauges = new ArrayList<>();
    /** The worker meters this binder registered, and where: taken out at close. */
    private final List<Bound> bound = new ArrayList<>();
    private ScheduledExecutorService timer;

    private record Bound(MeterRegistry registry, Meter meter) {
    }

    private record EndpointGauge(MultiGauge gauge, ToDoubleFunction<EndpointStatistics> value) {
    }

    private record LaneGauge(MultiGauge gauge, ToDoubleFunction<LaneStatistics> value) {
    }

    /** @param worker the worker to measure, its endpoint meters refreshed every 10 seconds */
    public FencelineMetrics(Worker worker) {
        this(worker, Duration.ofSeconds(10));
    }

    /**
     * @param worker the worker to measure
     * @param refresh how often the endpoint and lane meters follow the worker's endpoints
     */
    public FencelineMetrics(Worker worker, Duration refresh) {
        this.worker = Objects.requireNonNull(worker, "worker");
        if (refresh.isNegative() || refresh.isZero()) {
            throw new IllegalArgumentException("refresh interval " + refresh + " must be positive");
        }
        this.refresh = refresh;
    }

    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Tags w = Tags.of("worker", worker.name());
        counter(registry, "fenceline.operations", w.and("outcome", "issued"), WorkerStatistics::operations,
                "operations issued");
        counter(registry, "fenceline.operations", w.and("outcome", "completed"), WorkerStatistics::completed,
                "operations completed successfully");
        counter(registry, "fenceline.operations", w.and("outcome", "failed"), WorkerStatistics::failed,
                "operations completed with an error");
        counter(registry, "fenceline.flushes", w, WorkerStatistics::flushes, "flushes completed");
        counter(registry, "fenceline.fences.strong", w, WorkerStatistics::strongFences, "strong fences started");
        counter(registry, "fenceline.reconfigurations", w, WorkerStatistics::reconfigurations,
                "lane-table changes applied");
        counter(registry, "fenceline.restarts", w, WorkerStatistics::restarts,
                "requests restarted after a reconfiguration");
        counter(registry, "fenceline.fastpath", w, WorkerStatistics::direct, "operations done on the fast path");
        track(registry, "fenceline.operations.outstanding", w, () -> Gauge.builder("fenceline.operations.outstanding",
                worker, x -> x.statistics().outstanding()).tags(w).description("operations issued and not yet"
                        + " completed").register(registry));
        track(registry, "fenceline.endpoints.open", w, () -> Gauge.builder("fenceline.endpoints.open", worker,
                x -> x.statistics().openEndpoints()).tags(w).description("endpoints open now").register(registry));
        endpoint(registry, "fenceline.endpoint.operations", "operations issued", s -> s.operations());
        endpoint(registry, "fenceline.endpoint.outstanding", "operations outstanding", s -> s.outstanding());
        endpoint(registry, "fenceline.endpoint.flush.p99", "99th percentile of flush latency, seconds",
                s -> s.flushLatency().p99() / 1e9);
        endpoint(registry, "fenceline.endpoint.fence.p99", "99th percentile of strong fence latency, seconds",
                s -> s.strongFenceLatency().p99() / 1e9);
        lane(registry, "fenceline.lane.live", "1 if the lane is live", l -> l.live() ? 1 : 0);
        lane(registry, "fenceline.lane.bytes", "payload bytes posted", l -> l.bytes());
        lane(registry, "fenceline.lane.operations", "requests sent", l -> l.operations());
        lane(registry, "fenceline.lane.failovers", "failures the endpoint went on without", l -> l.failovers());
        lane(registry, "fenceline.lane.parks", "times the lane had no room", l -> l.noResourceParks());
        refresh();
        if (timer == null) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "fenceline-metrics-" + worker.name());
                t.setDaemon(true);
                return t;
            });
            timer.scheduleWithFixedDelay(this::refresh, refresh.toMillis(), refresh.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void counter(MeterRegistry registry, String name, Tags tags, ToLongFunction<WorkerStatistics> value,
            String description) {
        track(registry, name, tags, () -> FunctionCounter.builder(name, worker,
                x -> value.applyAsLong(x.statistics())).tags(tags).description(description).register(registry));
    }

    /**
     * Registers a worker meter and remembers it for {@link #close()}, unless the registry held one
     * under that name and tags already: Micrometer hands that one back, and it is another binder's
     * (one still bound for a worker of the same name), whose close takes it out, not this one's.
     */
    private void track(MeterRegistry registry, String name, Tags tags, java.util.function.Supplier<Meter> register) {
        boolean ours = registry.find(name).tags(tags).meter() == null;
        Meter m = register.get();
        if (ours) {
            bound.add(new Bound(registry, m));
        }
    }

    private void endpoint(MeterRegistry registry, String name, String description,
            ToDoubleFunction<EndpointStatistics> value) {
        endpointGauges.add(new EndpointGauge(MultiGauge.builder(name).tag("worker", worker.name())
                .description(description).register(registry), value));
    }

    private void lane(MeterRegistry registry, String name, String description, ToDoubleFunction<LaneStatistics> value) {
        laneGauges.add(new LaneGauge(MultiGauge.builder(name).tag("worker", worker.name()).description(description)
                .register(registry), value));
    }

    /** Brings the endpoint and lane meters up to date with the worker's open endpoints (the timer calls it). */
    public synchronized void refresh() {
        List<Endpoint> endpoints = worker.endpoints();
        List<EndpointStatistics> stats = new ArrayList<>(endpoints.size());
        for (Endpoint ep : endpoints) {
            stats.add(ep.statistics());
        }
        for (EndpointGauge g : endpointGauges) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>(stats.size());
            for (int i = 0; i < stats.size(); i++) {
                EndpointStatistics s = stats.get(i);
                rows.add(MultiGauge.Row.of(Tags.of("endpoint", s.endpoint(), "peer", endpoints.get(i).peer().name()),
                        g.value().applyAsDouble(s)));
            }
            g.gauge().register(rows, true);
        }
        for (LaneGauge g : laneGauges) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            for (EndpointStatistics s : stats) {
                for (LaneStatistics l : s.lanes()) {
                    rows.add(MultiGauge.Row.of(Tags.of("endpoint", s.endpoint(), "lane", Integer.toString(l.index()),
                            "transport", l.transport()), g.value().applyAsDouble(l)));
                }
            }
            g.gauge().register(rows, true);
        }
    }

    /**
     * Stops refreshing and takes this binder's meters out of every registry it was bound to: a
     * closed worker's endpoints and lanes leave no rows behind, and Micrometer, which hands out the
     * meter already registered under a name and tags, hands a worker made again under the same name
     * meters that read it, not this one.
     */
    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
        for (EndpointGauge g : endpointGauges) {
            g.gauge().register(List.of(), true);
        }
        for (LaneGauge g : laneGauges) {
            g.gauge().register(List.of(), true);
        }
        endpointGauges.clear();
        laneGauges.clear();
        for (Bound b : bound) {
            b.registry().remove(b.meter());
        }
        bound.clear();
    }
}
