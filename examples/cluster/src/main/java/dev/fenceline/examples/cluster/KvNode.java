package dev.fenceline.examples.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.cluster.ClusterWorker;
import dev.fenceline.cluster.FencelineCluster;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * One member of the replicated key-value store, in a process of its own. Every member's worker
 * {@code kv-<index>} holds the whole table in a region published as {@code table}; each key has one
 * writer (the member {@code key % nodes}), which writes it to every replica with a put, a fence, an
 * ADD of the slot's version and a fence, and waits for both before its next write.
 *
 * <p>It talks to {@link ClusterDemo} on its standard streams: it prints {@code UP <index>} once it
 * has endpoints and keys for every member; then {@code RUN} runs the writes ({@code PROGRESS n} as
 * they go, an {@code OUTCOME} line per replica and {@code WRITTEN} at the end), {@code VERIFY
 * <dead>} reads the table of every surviving replica with one RMA get each and checks its keys
 * ({@code VERIFIED ok|violation ...}), and {@code QUIT} ends it. It prints {@code GONE <index>}
 * when a member's worker leaves the cluster.
 */
public final class KvNode {
    private static final long TIMEOUT_S = 60;

    private final int index;
    private final int nodes;
    private final int keys;
    private final Worker kv;
    private final Endpoint[] eps;
    private final RemoteKey[] tables;
    /** acked[replica][key]: this member's writes of key that replica acknowledged. */
    private final long[][] acked;
    private final boolean[] dead;
    private final long[] failed;
    private final long[] unknown;
    private final long[] other;
    private final String[] firstError;

    private KvNode(int index, int nodes, int keys, Worker kv, Endpoint[] eps, RemoteKey[] tables) {
        this.index = index;
        this.nodes = nodes;
        this.keys = keys;
        this.kv = kv;
        this.eps = eps;
        this.tables = tables;
        this.acked = new long[nodes][keys];
        this.dead = new boolean[nodes];
        this.failed = new long[nodes];
        this.unknown = new long[nodes];
        this.other = new long[nodes];
        this.firstError = new String[nodes];
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /**
     * @param args index, nodes, keys per node, config file, canonical host, port, seed address,
     *     then the tcp listen addresses
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        int index = Integer.parseInt(args[0]);
        int nodes = Integer.parseInt(args[1]);
        int keys = Integer.parseInt(args[2]) * nodes;
        Config overrides = ConfigFactory.parseString("pekko.remote.artery.canonical.hostname = \"" + args[4] + "\"\n"
                + "pekko.remote.artery.canonical.port = " + args[5] + "\n"
                + "pekko.cluster.seed-nodes = [\"" + args[6] + "\"]\n"
                + "fenceline.transport.tcp.listen = " + listOf(args, 7));
        Config config = overrides.withFallback(ConfigFactory.parseFile(new File(args[3])))
                .withFallback(ConfigFactory.load()).resolve();
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "kv", config);
        int status;
        try {
            KvNode node = start(index, nodes, keys, system);
            node.serve();
        } catch (Exception | Error e) {
            if (terminate(system) >= 0) { // still running: its non-daemon threads would keep this JVM alive
                e.printStackTrace();
                System.exit(1);
            }
            throw e;
        }
        status = terminate(system);
        if (status >= 0) {
            System.exit(status); // the same
        }
    }

    /** The line a member logs when Pekko's termination stalled with none of Fenceline's actors left. */
    static final String PEKKO_STALL = "actor system stalled in Pekko's own shutdown";

    /**
     * Terminates the actor system and waits {@link #SHUTDOWN_S} for it. Pekko 1.7's Artery waits
     * without a deadline for its streams to complete, and a TLS association to a member that was
     * killed can keep one open (upstream fixed this later with a bounded wait): the actor system
     * then never finishes terminating. Fenceline's own actors must be gone by then; the member
     * prints what is left and tells apart a stall in Pekko from one of its own.
     *
     * @return -1 if the actor system terminated; else the status to exit with: 0 if only Pekko's
     *     actors are left, 3 if any of Fenceline's is
     */
    private static int terminate(ActorSystem<Void> system) throws Exception {
        long t0 = System.nanoTime();
        note("terminating the actor system");
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(SHUTDOWN_S, TimeUnit.SECONDS);
            note("actor system terminated in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
            return -1;
        } catch (TimeoutException e) {
            String tree = ((org.apache.pekko.actor.ActorSystemImpl) org.apache.pekko.actor.typed.javadsl.Adapter
                    .toClassic(system)).printTree();
            boolean ours = holdsFencelineActors(tree);
            note((ours ? "actor system not terminated after " + SHUTDOWN_S + " s with Fenceline's actors still"
                    + " running" : PEKKO_STALL + ": not terminated after " + SHUTDOWN_S + " s, none of"
                    + " Fenceline's actors left") + "; its actors:\n" + tree);
            return ours ? 3 : 0;
        }
    }

    /**
     * @param tree an actor system's tree as {@code ActorSystemImpl.printTree} draws it
     * @return whether one of Fenceline's actors (their names start with {@code fenceline-}) is in it
     */
    static boolean holdsFencelineActors(String tree) {
        return tree.contains("-> fenceline-");
    }

    /** The longest a member's worker close, and then its actor system's termination, may take each. */
    static final long SHUTDOWN_S = 20;
    /** After QUIT, a member still running this long prints its threads and halts (its log says why). */
    static final long QUIT_WATCHDOG_S = 50;

    /** A timestamped line on stderr, the member's log, for what its shutdown did when. */
    private static void note(String what) {
        System.err.println(java.time.Instant.now() + " kv: " + what);
    }

    /**
     * A daemon that, if the member has not exited {@link #QUIT_WATCHDOG_S} after QUIT, prints every
     * thread's stack to the log and halts the process: a shutdown that hangs shows where.
     */
    private static void watchShutdown() {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(QUIT_WATCHDOG_S));
            } catch (InterruptedException e) {
                return;
            }
            StringBuilder dump = new StringBuilder("shutdown still running " + QUIT_WATCHDOG_S + " s after QUIT;"
                    + " halting. Threads:\n");
            Thread.getAllStackTraces().forEach((t, stack) -> {
                dump.append('"').append(t.getName()).append("\" ").append(t.getState())
                        .append(t.isDaemon() ? " daemon" : "").append('\n');
                for (StackTraceElement e : stack) {
                    dump.append("    at ").append(e).append('\n');
                }
            });
            note(dump.toString());
            System.err.flush();
            Runtime.getRuntime().halt(3);
        }, "kv-quit-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    private static String listOf(String[] args, int from) {
        List<String> quoted = new ArrayList<>();
        for (int i = from; i < args.length; i++) {
            quoted.add("\"" + args[i] + "\"");
        }
        return quoted.toString();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static KvNode start(int index, int nodes, int keys, ActorSystem<Void> system) throws Exception {
        Cluster cluster = Cluster.get(system);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        while (cluster.selfMember().status() != MemberStatus.up()) {
            if (System.nanoTime() > until) {
                throw new TimeoutException("member " + index + " did not come up within " + TIMEOUT_S + " s");
            }
            Thread.sleep(20); // a process's main thread, not an actor
        }
        FencelineCluster fc = FencelineCluster.get(system);
        Worker kv = await(Fenceline.get(system).newWorker("kv-" + index));
        MemoryRegion table = kv.allocate((long) Slots.SLOT * keys);
        await(fc.advertise(kv, java.util.Map.of("table", table))); // found with its table, never without
        Endpoint[] eps = new Endpoint[nodes];
        RemoteKey[] tables = new RemoteKey[nodes];
        for (int j = 0; j < nodes; j++) {
            ClusterWorker peer = awaitWorker(fc, "kv-" + j, until);
            eps[j] = await(fc.connect(kv, peer));
            tables[j] = await(fc.lookup(kv, peer, "table"));
        }
        KvNode node = new KvNode(index, nodes, keys, kv, eps, tables);
        Thread watcher = new Thread(() -> node.watch(fc), "kv-membership-watch");
        watcher.setDaemon(true);
        watcher.start();
        say("UP " + index + " " + cluster.selfMember().address());
        return node;
    }

    private static ClusterWorker awaitWorker(FencelineCluster fc, String name, long until) throws Exception {
        while (true) {
            for (ClusterWorker w : fc.workers()) {
                if (w.name().equals(name)) {
                    return w;
                }
            }
            if (System.nanoTime() > until) {
                throw new TimeoutException("worker " + name + " did not appear; known: " + fc.workers());
            }
            Thread.sleep(20); // not an actor: the process's main thread
        }
    }

    /** Prints GONE and the member's index when a member's worker leaves the cluster's listing. */
    private void watch(FencelineCluster fc) {
        Set<String> seen = new HashSet<>();
        Set<String> gone = new HashSet<>();
        while (true) {
            Set<String> now = new HashSet<>();
            fc.workers().forEach(w -> now.add(w.name()));
            seen.addAll(now);
            for (String name : seen) {
                if (!now.contains(name) && gone.add(name)) {
                    say("GONE " + name.substring(name.indexOf('-') + 1));
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void serve() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] cmd = line.trim().split(" ");
            switch (cmd[0]) {
                case "RUN" -> write(Long.parseLong(cmd[1]));
                case "VERIFY" -> verify(Integer.parseInt(cmd[1]));
                case "QUIT" -> {
                    watchShutdown();
                    long t0 = System.nanoTime();
                    note("QUIT: closing worker " + kv.name());
                    kv.close().toCompletableFuture().get(SHUTDOWN_S, TimeUnit.SECONDS);
                    note("worker closed in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
                    return;
                }
                default -> say("ERROR unknown command " + line);
            }
        }
    }

    private List<Integer> ownedKeys() {
        List<Integer> owned = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            if (Slots.owner(k, nodes) == index) {
                owned.add(k);
            }
        }
        return owned;
    }

    /** Each write goes to every replica still alive: put, fence, ADD, fence; then waits for all. */
    private void write(long writes) throws Exception {
        List<Integer> owned = ownedKeys();
        long[] issued = new long[keys];
        ByteBuffer[] values = new ByteBuffer[nodes];
        for (int j = 0; j < nodes; j++) {
            values[j] = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        }
        List<List<CompletableFuture<Void>>> pending = new ArrayList<>();
        for (int j = 0; j < nodes; j++) {
            pending.add(new ArrayList<>(List.of(CompletableFuture.completedFuture(null),
                    CompletableFuture.completedFuture(null))));
        }
        for (long w = 1; w <= writes; w++) {
            int key = owned.get((int) ((w - 1) % owned.size()));
            long value = Slots.value(index, key, ++issued[key]);
            for (int j = 0; j < nodes; j++) {
                if (dead[j]) {
                    continue;
                }
                RemoteKey t = tables[j];
                values[j].putLong(0, value);
                pending.get(j).set(0, eps[j].put(values[j], t.baseAddress() + Slots.valueOffset(key), t).toCompletableFuture());
                eps[j].fence();
                pending.get(j).set(1, eps[j].atomicPost64(AtomicOp.ADD, t.baseAddress() + Slots.versionOffset(key), t, 1)
                        .toCompletableFuture());
                eps[j].fence();
            }
            for (int j = 0; j < nodes; j++) {
                if (!dead[j]) {
                    settle(j, key, pending.get(j));
                }
            }
            if (w % Math.max(1, writes / 20) == 0) {
                say("PROGRESS " + w);
            }
        }
        for (int j = 0; j < nodes; j++) {
            long total = 0;
            for (long a : acked[j]) {
                total += a;
            }
            say("OUTCOME " + j + " " + total + " " + failed[j] + " " + unknown[j] + " " + other[j] + " "
                    + (firstError[j] == null ? "-" : firstError[j].replace('\n', ' ')));
        }
        say("WRITTEN " + index);
    }

    /** One replica's put and ADD of a write: acknowledged, or the replica is given up, with why. */
    private void settle(int j, int key, List<CompletableFuture<Void>> putAndAdd) throws InterruptedException {
        Throwable error = null;
        for (CompletableFuture<Void> f : putAndAdd) {
            try {
                f.get(TIMEOUT_S, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                error = error == null ? e.getCause() : error;
            } catch (TimeoutException e) {
                error = error == null ? e : error; // a request that never ends is a violation below
            }
        }
        if (error == null) {
            acked[j][key]++;
            return;
        }
        if (error instanceof OutcomeUnknownException) {
            unknown[j]++;
        } else if (error instanceof EndpointFailedException) {
            failed[j]++;
        } else {
            other[j]++;
        }
        if (firstError[j] == null) {
            firstError[j] = error.getClass().getSimpleName() + ": " + error.getMessage();
        }
        dead[j] = true; // its endpoint ended: nothing more is written to it
    }

    /** Reads every surviving replica's table with one RMA get and checks the keys this member can judge. */
    private void verify(int deadMember) throws Exception {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        int judgeOfTheDead = deadMember == 0 ? 1 : 0; // the lowest survivor checks the dead member's keys
        for (int j = 0; j < nodes; j++) {
            if (j == deadMember) {
                continue;
            }
            ByteBuffer copy = ByteBuffer.allocateDirect(Slots.SLOT * keys).order(ByteOrder.nativeOrder());
            await(eps[j].get(copy, tables[j].baseAddress(), tables[j]));
            for (int k = 0; k < keys; k++) {
                long version = copy.getLong((int) Slots.versionOffset(k));
                long value = copy.getLong((int) Slots.valueOffset(k));
                int owner = Slots.owner(k, nodes);
                String p = null;
                if (owner == index) {
                    p = Slots.checkAcknowledged(k, index, acked[j][k], version, value);
                    checked++;
                } else if (owner == deadMember && index == judgeOfTheDead) {
                    p = Slots.checkInterrupted(k, deadMember, version, value);
                    checked++;
                }
                if (p != null) {
                    problems.add("replica " + j + ": " + p);
                }
            }
        }
        say("VERIFIED " + (problems.isEmpty() ? "ok" : "violation") + " " + checked + " "
                + (problems.isEmpty() ? "-" : String.join("; ", problems.subList(0, Math.min(5, problems.size())))));
    }
}
