package dev.fenceline.testkit.junit;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Holds back the root logger's output during one test: its appenders are swapped for one that
 * keeps the events, and put back afterwards, with the kept events replayed through them if the
 * test failed. Only touched when logback is the SLF4J binding.
 */
final class LogCapture {
    /** A test that logs more than this keeps its last lines only. */
    private static final int MAX_EVENTS = 100_000;

    private final Logger root;
    private final List<Appender<ILoggingEvent>> detached = new ArrayList<>();
    private final Keeper keeper = new Keeper();

    private static final class Keeper extends AppenderBase<ILoggingEvent> {
        private final java.util.ArrayDeque<ILoggingEvent> events = new java.util.ArrayDeque<>();
        private int dropped;

        @Override
        protected synchronized void append(ILoggingEvent e) {
            e.prepareForDeferredProcessing();
            if (events.size() == MAX_EVENTS) {
                events.removeFirst();
                dropped++;
            }
            events.addLast(e);
        }

        synchronized List<ILoggingEvent> drain() {
            List<ILoggingEvent> out = new ArrayList<>(events);
            events.clear();
            return out;
        }
    }

    private LogCapture(Logger root) {
        this.root = root;
    }

    /** @return whether logback is the binding, so that {@link #start()} can capture */
    static boolean available() {
        try {
            Class.forName("ch.qos.logback.classic.LoggerContext", false, LogCapture.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return false;
        }
        return LogbackCheck.isBinding();
    }

    /** Kept apart so that {@link #available()} loads no logback class when there is none. */
    private static final class LogbackCheck {
        static boolean isBinding() {
            return LoggerFactory.getILoggerFactory() instanceof LoggerContext;
        }
    }

    /** @return a capture in progress; call {@link #stop} once */
    static LogCapture start() {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        LogCapture c = new LogCapture(ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME));
        c.keeper.setContext(ctx);
        c.keeper.setName("fenceline-test-capture");
        c.keeper.start();
        for (Iterator<Appender<ILoggingEvent>> it = c.root.iteratorForAppenders(); it.hasNext();) {
            c.detached.add(it.next());
        }
        c.root.addAppender(c.keeper);
        for (Appender<ILoggingEvent> a : c.detached) {
            c.root.detachAppender(a);
        }
        return c;
    }

    /**
     * Puts the appenders back.
     *
     * @param failed whether the test failed: then its kept lines go to those appenders, between
     *     two marker lines naming it
     * @param test the test's name, for the markers
     */
    void stop(boolean failed, String test) {
        for (Appender<ILoggingEvent> a : detached) {
            root.addAppender(a);
        }
        root.detachAppender(keeper);
        keeper.stop();
        List<ILoggingEvent> events = keeper.drain();
        if (failed && !events.isEmpty()) {
            System.out.println("--- log of failed test " + test + (keeper.dropped > 0 ? " (its first " + keeper.dropped
                    + " lines dropped)" : "") + " ---");
            System.out.flush();
            for (ILoggingEvent e : events) {
                for (Appender<ILoggingEvent> a : detached) {
                    a.doAppend(e);
                }
            }
            System.out.println("--- end of log of " + test + " ---");
        }
    }
}
