package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.Epoll;

/** {@link LendingEventLoopTest} on busy-polling epoll event loops (busy-poll = on). */
class LendingBusyPollEventLoopTest extends LendingEventLoopTest {
    @Override
    NettyIo io() {
        assumeTrue(Epoll.isAvailable(), () -> "native epoll unavailable: " + Epoll.unavailabilityCause());
        return NettyIo.choose("epoll", true);
    }
}
