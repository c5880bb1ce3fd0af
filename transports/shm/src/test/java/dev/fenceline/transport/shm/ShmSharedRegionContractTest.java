package dev.fenceline.transport.shm;

/**
 * The SPI contract suite on the shm ring lane with the target's region allocated in a shared
 * segment: the lane stores into the peer's mapping itself where it may (a new operation while no
 * answer is owed), and takes the ring where it must (a copy that may have been applied elsewhere).
 */
class ShmSharedRegionContractTest extends ShmContractTest {
    @Override
    protected boolean sharedRegion() {
        return true;
    }
}
