package dev.fenceline.testkit;

import dev.fenceline.AtomicOp;
import dev.fenceline.spi.RemoteAccessTarget;
import java.nio.ByteBuffer;

/**
 * The contract suite's target memory, known only once its transport has allocated it (a shared
 * region): the transport is made with this, and {@code memory[0]} is set before any operation.
 */
record LateTarget(ContractTarget[] memory) implements RemoteAccessTarget {
    @Override
    public void put(long keyId, long address, ByteBuffer src) {
        memory[0].put(keyId, address, src);
    }

    @Override
    public void put(long keyId, long address, ByteBuffer[] parts) {
        memory[0].put(keyId, address, parts);
    }

    @Override
    public void get(long keyId, long address, ByteBuffer dst) {
        memory[0].get(keyId, address, dst);
    }

    @Override
    public long atomic(long keyId, long address, int width, AtomicOp op, long operand) {
        return memory[0].atomic(keyId, address, width, op, operand);
    }

    @Override
    public long compareAndSwap(long keyId, long address, int width, long expected, long desired) {
        return memory[0].compareAndSwap(keyId, address, width, expected, desired);
    }

    @Override
    public void activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
        memory[0].activeMessage(id, header, payload);
    }
}
