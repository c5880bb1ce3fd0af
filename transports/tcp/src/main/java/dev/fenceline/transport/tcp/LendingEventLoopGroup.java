package dev.fenceline.transport.tcp;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/** Netty's event-loop group whose loops are {@link LendingEventLoop}s. */
final class LendingEventLoopGroup extends MultiThreadIoEventLoopGroup {
    LendingEventLoopGroup(int threads, ThreadFactory threadFactory, IoHandlerFactory handlers) {
        super(threads, threadFactory, handlers);
    }

    @Override
    protected IoEventLoop newChild(Executor executor, IoHandlerFactory handlers, Object... args) {
        return new LendingEventLoop(this, executor, handlers);
    }

    /** @return the group's loops */
    List<LendingEventLoop> loops() {
        List<LendingEventLoop> loops = new ArrayList<>();
        for (EventExecutor e : this) {
            loops.add((LendingEventLoop) e);
        }
        return loops;
    }
}
