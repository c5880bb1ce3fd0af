package dev.fenceline.testkit.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that talks to Fenceline over the simulated transport. One actor system (an
 * {@code ActorTestKit}) and one runtime per test class, shut down after it; test methods and
 * constructors may take {@link dev.fenceline.Fenceline}, {@link dev.fenceline.testkit.SimNetwork},
 * {@code ActorTestKit} and {@code TestProbe} parameters.
 *
 * <p>The sim's seed comes from {@link #seed()}, or the environment variable
 * {@code FENCELINE_TEST_SEED}; a failing test prints it with the line that reruns it. The
 * environment variable {@code FENCELINE_TEST_TIME_FACTOR} stretches the test kit's timeouts on a
 * slow machine (see {@link FencelineExtension#dilated(java.time.Duration)}).
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
}
