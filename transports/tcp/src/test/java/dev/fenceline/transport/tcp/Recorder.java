package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

/**
 * A {@link FrameHandler} that accepts every frame and records each call as a list: the frame's
 * type name followed by its fields, byte arrays and buffers as hex (buffers are copied, since they
 * are only valid during the call).
 */
final class Recorder implements FrameHandler {
    final List<List<Object>> calls = new ArrayList<>();

    static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    static String hex(ByteBuf b) {
        return hex(ByteBufUtil.getBytes(b));
    }

    /** @return the only call recorded, failing if there is not exactly one */
    List<Object> single() {
        if (calls.size() != 1) {
            throw new AssertionError("expected exactly one handler call, got " + calls);
        }
        return calls.get(0);
    }

    private void record(Object... fields) {
        calls.add(List.of(fields));
    }

    @Override
    public void hello(int minVersion, int maxVersion, UUID client, UUID server, byte[] nonce) {
        record("HELLO", minVersion, maxVersion, client, server, hex(nonce));
    }

    @Override
    public void challenge(int version, byte[] nonce) {
        record("CHALLENGE", version, hex(nonce));
    }

    @Override
    public void auth(byte[] proof) {
        record("AUTH", hex(proof));
    }

    @Override
    public void welcome(int maxData, byte[] proof) {
        record("WELCOME", maxData, hex(proof));
    }

    @Override
    public void refuse(String reason) {
        record("REFUSE", reason);
    }

    @Override
    public void put(long token, long origin, long seq, long low, long key, long address, ByteBuf data) {
        record("PUT", token, origin, seq, low, key, address, hex(data));
    }

    @Override
    public void get(long token, long origin, long seq, long low, long key, long address, int length) {
        record("GET", token, origin, seq, low, key, address, length);
    }

    @Override
    public void atomic(long token, long origin, long seq, long low, long key, long address, int kind, AtomicOp op,
            int width,
            long operand, long compare) {
        record("ATOMIC", token, origin, seq, low, key, address, kind, op == null ? "none" : op, width, operand, compare);
    }

    @Override
    public void activeMessage(long token, long origin, long seq, long low, int id, ByteBuf header,
            ByteBuf payload) {
        record("AM", token, origin, seq, low, id, hex(header), hex(payload));
    }

    @Override
    public void flush(long token) {
        record("FLUSH", token);
    }

    @Override
    public void ack(long token, long value) {
        record("ACK", token, value);
    }

    @Override
    public void getData(long token, ByteBuf data) {
        record("GET_DATA", token, hex(data));
    }

    @Override
    public void nack(long token, int code, int reason, String message) {
        record("NACK", token, code, reason, message);
    }

    @Override
    public void flushed(long token) {
        record("FLUSHED", token);
    }
}
