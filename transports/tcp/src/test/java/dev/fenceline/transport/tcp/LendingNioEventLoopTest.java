package dev.fenceline.transport.tcp;

/** {@link LendingEventLoopTest} on NIO's event loops. */
class LendingNioEventLoopTest extends LendingEventLoopTest {
    @Override
    NettyIo io() {
        return NettyIo.choose("nio", false);
    }
}
