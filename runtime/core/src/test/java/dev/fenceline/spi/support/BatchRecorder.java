package dev.fenceline.spi.support;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import java.util.ArrayList;
import java.util.List;

/** A listener that records each completion batch as "token=value ..." and ignores the rest. */
final class BatchRecorder implements LaneListener {
    final List<String> batches = new ArrayList<>();

    @Override
    public void onCompleted(long token, long value) {
    }

    @Override
    public void onCompletedBatch(long[] tokens, long[] values, int count) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < count; i++) {
            sb.append(tokens[i]).append('=').append(values[i]).append(' ');
        }
        batches.add(sb.toString().trim());
    }

    @Override
    public void onFailed(long token, FencelineException error) {
    }

    @Override
    public void onFlushed(long token) {
    }

    @Override
    public void onFlushFailed(long token, FencelineException error) {
    }

    @Override
    public void onReady() {
    }

    @Override
    public void onLaneFailed(Throwable cause) {
    }

    @Override
    public void onReplaced(LaneConnection replacement) {
    }

    @Override
    public void onRecovered(LaneConnection connection) {
    }

    @Override
    public void onLaneAdded(LaneConnection connection) {
    }
}
