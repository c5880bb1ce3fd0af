package dev.fenceline.testkit.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that talks to Fenceline over the simulated transport: an actor system (an
 * {@code ActorTestKit}) with a {@link dev.fenceline.Fenceline} runtime bound to it, for the whole
 * class or for each test method ({@link #lifecycle()}), shut down after it. Test methods and
 * constructors may take {@link dev.fenceline.Fenceline}, {@link dev.fenceline.testkit.SimNetwork},
 * {@code ActorTestKit} and {@code TestProbe} parameters. A {@code @Nested} class without an
 * annotation of its own shares its enclosing class's runtime; one with its own gets its own.
 *
 * <p>The sim's seed comes from {@link #seed()}, or the environment variable
 * {@code FENCELINE_TEST_SEED}; each test publishes it as the report entry {@code fenceline.seed},
 * and a failing test prints it with the line that reruns it. With {@link #captureLogs()} (and
 * logback as the SLF4J binding), a test's log lines are held back and printed only if it fails.
 * The environment variable {@code FENCELINE_TEST_TIME_FACTOR} stretches the test kit's timeouts
 * on a slow machine (see {@link FencelineExtension#dilated(java.time.Duration)}).
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(FencelineExtension.class)
public @interface FencelineTest {
    /** @return HOCON laid over the defaults, e.g. the sim's lanes or the fence mode */
    String config() default "";

    /** @return the sim's seed; 0 takes {@code FENCELINE_TEST_SEED}, or 1 */
    long seed() default 0;

    /** @return whether the class's tests share one runtime or each test gets a fresh one */
    Lifecycle lifecycle() default Lifecycle.PER_CLASS;

    /**
     * @return hold back each test's log lines and print them only if it fails (logback only; off
     *     while JUnit runs tests in parallel, since the capture is process-wide)
     */
    boolean captureLogs() default true;

    /** How long a runtime lives. */
    enum Lifecycle {
        /** One runtime for the test class (and its nested classes without their own annotation). */
        PER_CLASS,
        /** A fresh runtime, with the same seed, for each test method: no state leaks between tests. */
        PER_METHOD
    }
}
