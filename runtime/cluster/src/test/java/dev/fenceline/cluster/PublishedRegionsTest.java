package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.Worker;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A name answers with a key only while its region is open: a region closed without being
 * unpublished was still looked up, and its key failed only when used, at the target.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PublishedRegionsTest {
    @Test
    void aRegionClosedWithoutUnpublishIsNoLongerFound() throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fenceline-test", ClusterMember.config(null, 0));
        try {
            ClusterMember.joinedToItself(system);
            FencelineCluster fc = FencelineCluster.get(system);
            Worker kv = Fenceline.get(system).newWorker("kv").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion table = kv.allocate(64);
            MemoryRegion later = kv.allocate(64);
            ClusterWorker self = fc.advertise(kv, Map.of("table", table)).toCompletableFuture().get(30, TimeUnit.SECONDS);
            fc.publish(kv, "later", later).toCompletableFuture().get(30, TimeUnit.SECONDS);
            for (String name : new String[] {"table", "later"}) {
                MemoryRegion r = name.equals("table") ? table : later;
                assertEquals(r.remoteKey(), fc.lookup(kv, self, name).toCompletableFuture().get(30, TimeUnit.SECONDS));
                r.close();
                assertTrue(r.isClosed());
                CompletionException e = assertThrows(CompletionException.class,
                        () -> fc.lookup(kv, self, name).toCompletableFuture().join());
                RemoteAccessException refused = assertInstanceOf(RemoteAccessException.class, e.getCause());
                assertEquals(RemoteAccessException.Reason.UNKNOWN_KEY, refused.reason());
                assertTrue(refused.getMessage().contains("'" + name + "'"), refused.getMessage());
            }
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Published, closed and dropped, never looked up again: its memory is not kept for the name. */
    @Test
    void aClosedRegionIsNotKeptAliveByItsName() throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fenceline-test", ClusterMember.config(null, 0));
        try {
            ClusterMember.joinedToItself(system);
            FencelineCluster fc = FencelineCluster.get(system);
            Worker kv = Fenceline.get(system).newWorker("kv").toCompletableFuture().get(30, TimeUnit.SECONDS);
            fc.advertise(kv).toCompletableFuture().get(30, TimeUnit.SECONDS);
            java.lang.ref.WeakReference<MemoryRegion> dropped = publishAndClose(fc, kv);
            for (int i = 0; i < 50 && dropped.get() != null; i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertTrue(dropped.get() == null, "the closed region is still reachable (from its published name)");
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static java.lang.ref.WeakReference<MemoryRegion> publishAndClose(FencelineCluster fc, Worker kv)
            throws Exception {
        MemoryRegion big = kv.allocate(1 << 20);
        fc.publish(kv, "big", big).toCompletableFuture().get(30, TimeUnit.SECONDS);
        big.close();
        return new java.lang.ref.WeakReference<>(big);
    }
}
