package dev.fenceline.transport.tcp;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Collects Netty's leak reports (logged at ERROR by ResourceLeakDetector) for {@link LeakGuard}. */
public final class LeakRecorder extends AppenderBase<ILoggingEvent> {
    static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    @Override
    protected void append(ILoggingEvent event) {
        LEAKS.add(event.getFormattedMessage());
    }
}
