package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.support.ExactlyOnce;
import io.netty.buffer.ByteBuf;

/**
 * The operation a {@link TargetHandler} is applying, and the appliers that apply it to the target
 * inside its once(): the handler sets the fields, then runs an applier; fields, not captures, so an
 * operation costs no allocation beyond its reply. Event loop only.
 */
final class TargetAppliers {
    RemoteAccessTarget target;
    long key;
    long address;
    ByteBuf data;
    ByteBuf header;
    int amId;
    int kind;
    AtomicOp op;
    int width;
    long operand;
    long compare;
    final ExactlyOnce.Operation applyPut = this::applyPut;
    final ExactlyOnce.Operation applyAtomic = this::applyAtomic;
    final ExactlyOnce.Operation applyActiveMessage = this::applyActiveMessage;

    private long applyPut() {
        if (data.nioBufferCount() == 1) {
            target.put(key, address, data.nioBuffer());
        } else { // a frame that spanned socket reads: written from its pieces, not gathered first
            target.put(key, address, data.nioBuffers());
        }
        return 0;
    }

    private long applyAtomic() {
        return kind == Wire.ATOMIC_CSWAP ? target.compareAndSwap(key, address, width, compare, operand)
                : target.atomic(key, address, width, op, operand);
    }

    private long applyActiveMessage() {
        target.activeMessage(amId, header.nioBuffer(), data.nioBuffer());
        return 0;
    }
}
