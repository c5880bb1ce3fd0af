package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker asleep on its ifaces' event fds wakes for an active message from another worker, and for
 * {@link UctWorker#wake} from another thread, long before its 30 s timeout; a worker with an iface
 * that has no event fd (cma) says it cannot sleep.
 */
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class UctWakeupTest {
    private static final long LONG = TimeUnit.SECONDS.toNanos(30);
    private static final long SOON = TimeUnit.SECONDS.toNanos(10);

    @BeforeEach
    void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static UctResource resource(String transport) {
        return UcxNative.resources().stream().filter(r -> r.transport().equals(transport)
                && (r.device().equals("memory") || r.device().equals("lo"))).findFirst().orElseThrow();
    }


    @ParameterizedTest
    @ValueSource(strings = {"posix", "tcp"})
    void aSleepingWorkerWakesForAMessage(String transport) throws Exception {
        UctResource r = resource(transport);
        try (UctWorker origin = UctWorker.create(); UctWorker target = UctWorker.create()) {
            UctIface b = target.open(r, Map.of());
            assertTrue(target.canWait(), r + " has an event fd");
            UctIface a = origin.open(r, Map.of());
            UctEndpoint ep = a.connect(b.address());
            RecordedEvents messages = new RecordedEvents();
            CompletableFuture<Long> woke = new CompletableFuture<>();
            Thread sleeper = new Thread(() -> {
                try {
                    long start = System.nanoTime();
                    while (messages.messageCount == 0 && System.nanoTime() - start < LONG) {
                        target.progress();
                        target.drain(messages);
                        if (messages.messageCount == 0) {
                            target.await(LONG); // the connection's own traffic may end it early: go round
                        }
                    }
                    woke.complete(System.nanoTime() - start);
                } catch (RuntimeException e) {
                    woke.completeExceptionally(e);
                }
            }, "uct-sleeper");
            sleeper.start();
            ByteBuffer payload = ByteBuffer.allocateDirect(16);
            long deadline = System.nanoTime() + SOON;
            int s;
            while ((s = ep.activeMessageCopy(5, BufferUtil.address(payload), 16)) == UctStatus.NO_RESOURCE) {
                assertTrue(System.nanoTime() < deadline, "no room to send");
                origin.progress();
            }
            assertEquals(UctStatus.OK, s, UctStatus.describe(s));
            long took;
            while (true) { // tcp sends from progress: keep the origin going until the target has it
                origin.progress();
                if (woke.isDone()) {
                    took = woke.get();
                    break;
                }
                assertTrue(System.nanoTime() < deadline + SOON, "the sleeping target never got the message");
            }
            sleeper.join();
            assertEquals(1, messages.messageCount);
            assertTrue(took < SOON, "woke for the message after " + took / 1000 + " us, not the 30 s timeout");
        }
    }

    @Test
    void aWakeFromAnotherThreadEndsTheSleepAndIsNotLostIfEarly() throws Exception {
        try (UctWorker w = UctWorker.create()) {
            w.open(resource("posix"), Map.of());
            w.wake(); // before any wait: the next wait returns at once
            long start = System.nanoTime();
            w.await(LONG);
            assertTrue(System.nanoTime() - start < SOON, "an early wake is not lost");
            CompletableFuture<Long> slept = new CompletableFuture<>();
            Thread sleeper = new Thread(() -> {
                long t = System.nanoTime();
                while (!w.await(LONG)) {
                    w.progress(); // pending events first
                }
                slept.complete(System.nanoTime() - t);
            }, "uct-sleeper");
            sleeper.start();
            w.wake();
            long took = slept.get(20, TimeUnit.SECONDS);
            sleeper.join();
            assertTrue(took < SOON, "woken after " + took / 1000 + " us");
        }
    }

    @Test
    void anIfaceWithoutAnEventFdMeansTheWorkerCannotSleep() {
        try (UctWorker w = UctWorker.create()) {
            assertFalse(w.canWait(), "no ifaces: nothing to sleep on");
            w.open(resource("posix"), Map.of());
            assertTrue(w.canWait());
            w.open(resource("cma"), Map.of());
            assertFalse(w.canWait(), "cma has no event fd");
        }
    }
    /**
     * A wake from another thread never reaches the native worker once its close began destroying it
     * (the descriptor a wake writes to is closed then, and its number may name another file): the
     * library's calls are watched through a shim that records them, with one thread waking in a loop
     * while the worker closes, 200 times, and a wake after close.
     */
    @Test
    void noWakeReachesTheNativeWorkerOnceItsCloseDestroysIt() throws Exception {
        for (int round = 0; round < 200; round++) {
            java.util.concurrent.atomic.AtomicBoolean destroying = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicInteger late = new java.util.concurrent.atomic.AtomicInteger();
            Shim real = UcxNative.shim();
            Shim watched = (Shim) java.lang.reflect.Proxy.newProxyInstance(Shim.class.getClassLoader(),
                    new Class<?>[] {Shim.class}, (proxy, method, args) -> {
                        if (method.getName().equals("flu_worker_destroy")) {
                            destroying.set(true);
                        } else if (method.getName().equals("flu_worker_wake") && destroying.get()) {
                            late.incrementAndGet();
                            return null; // not passed on: the worker may be gone
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            long handle = real.flu_worker_create();
            assertTrue(handle != 0, "a UCT worker");
            java.lang.reflect.Constructor<UctWorker> make = UctWorker.class.getDeclaredConstructor(Shim.class,
                    long.class);
            make.setAccessible(true);
            UctWorker w = make.newInstance(watched, handle);
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            Thread waker = new Thread(() -> {
                started.countDown();
                while (!destroying.get()) {
                    w.wake();
                }
                w.wake();
            });
            waker.start();
            started.await();
            w.close();
            waker.join();
            w.wake();
            assertEquals(0, late.get(), "round " + round + ": wakes after the worker's destruction began");
        }
    }
}
