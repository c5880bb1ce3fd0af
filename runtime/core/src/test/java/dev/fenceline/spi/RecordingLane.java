package dev.fenceline.spi;

import dev.fenceline.LaneType;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** A lane for tests: records what the endpoint asks of it, in order, and answers as told. */
public class RecordingLane implements LaneConnection {
    /** The connection id. */
    public final long id;
    /** The lane types. */
    public final Set<LaneType> types;
    /** What was asked, in order: "PUT:8", "flush", "fence", "busy", "close". */
    public final List<String> events = new ArrayList<>();
    /** Tokens of the flushes asked for. */
    public final List<Long> flushTokens = new ArrayList<>();
    /** The operations posted. */
    public final List<TransportOp> ops = new ArrayList<>();
    /** What {@link #post} answers. */
    public PostStatus answer = PostStatus.IN_PROGRESS;
    /** What {@link #flush} answers. */
    public PostStatus flushAnswer = PostStatus.IN_PROGRESS;
    /** What {@link #watchesLiveness} answers. */
    public boolean watched;
    /** What {@link #post} throws, if not null. */
    public dev.fenceline.FencelineException refusal;

    /**
     * @param id the connection id
     * @param types the lane types
     */
    public RecordingLane(long id, Set<LaneType> types) {
        this.id = id;
        this.types = types;
    }

    @Override
    public long id() {
        return id;
    }

    /** What {@link #transport()} answers. */
    public String transport = "recording";

    @Override
    public String transport() {
        return transport;
    }

    @Override
    public Set<LaneType> types() {
        return types;
    }

    @Override
    public int maxFragment() {
        return 1 << 16;
    }

    /** What {@link #capabilities()} answers; null: the default. */
    public LaneCapabilities capabilities;

    @Override
    public LaneCapabilities capabilities() {
        return capabilities != null ? capabilities : LaneConnection.super.capabilities();
    }

    @Override
    public void bind(LaneListener listener) {
    }

    @Override
    public PostStatus post(TransportOp op) {
        if (refusal != null) {
            events.add("refused");
            throw refusal;
        }
        if (answer == PostStatus.NO_RESOURCE) {
            events.add("busy");
            return answer;
        }
        events.add(op.kind() + ":" + op.bytes());
        ops.add(op);
        return answer;
    }

    @Override
    public boolean watchesLiveness() {
        return watched;
    }

    @Override
    public PostStatus flush(long token) {
        if (flushAnswer == PostStatus.NO_RESOURCE) {
            events.add("busy");
            return flushAnswer;
        }
        events.add("flush");
        flushTokens.add(token);
        return flushAnswer;
    }

    @Override
    public void fence() {
        events.add("fence");
    }


    @Override
    public boolean deduplicates() {
        return true;
    }

    private Object scope = "recording";
    private Revocation revocation = Revocation.MAY_STILL_APPLY;

    /**
     * @param s the exactly-once scope this lane reports (every recording lane shares one by default)
     * @return this
     */
    public RecordingLane scope(Object s) {
        this.scope = s;
        return this;
    }

    /**
     * @param r what {@link #revoke()} answers (by default: every copy may still apply)
     * @return this
     */
    public RecordingLane revocation(Revocation r) {
        this.revocation = r;
        return this;
    }

    @Override
    public Object exactlyOnceScope() {
        return scope;
    }

    @Override
    public Revocation revoke() {
        events.add("revoke");
        return revocation;
    }

    @Override
    public void close() {
        events.add("close");
    }
}
