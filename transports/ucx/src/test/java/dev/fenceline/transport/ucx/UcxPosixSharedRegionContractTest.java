package dev.fenceline.transport.ucx;

/**
 * The SPI contract suite over UCT's posix shared memory with the target's region allocated by the
 * transport, which UCT's own stores reach: new operations go through the hardware, and a copy that
 * may have been applied elsewhere goes as a message the target's window sees.
 */
class UcxPosixSharedRegionContractTest extends UcxPosixContractTest {
    @Override
    protected boolean sharedRegion() {
        return true;
    }

    /** UCT stores puts into the region itself; the target takes no part. */
    @Override
    protected boolean targetAppliesPuts() {
        return false;
    }

    /** UCT's stores go to the address the key names: the region's own. */
    @Override
    protected long baseAddress(java.nio.ByteBuffer region) {
        return com.kenai.jffi.MemoryIO.getInstance().getDirectBufferAddress(region);
    }
}
