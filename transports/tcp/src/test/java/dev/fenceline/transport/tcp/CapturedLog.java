package dev.fenceline.transport.tcp;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;

/** What one class logs while the test runs (Logback's list appender on that class's logger); close detaches it. */
final class CapturedLog implements AutoCloseable {
    private final Logger log;
    private final ListAppender<ILoggingEvent> seen = new ListAppender<>();

    private CapturedLog(Class<?> of) {
        this.log = (Logger) org.slf4j.LoggerFactory.getLogger(of);
        seen.start();
        log.addAppender(seen);
    }

    /** @return the log of {@code of}, captured from now on */
    static CapturedLog of(Class<?> of) {
        return new CapturedLog(of);
    }

    /** @return the messages logged so far, formatted */
    List<String> messages() {
        synchronized (seen) { // its appends hold this lock
            return seen.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    @Override
    public void close() {
        log.detachAppender(seen);
    }
}
