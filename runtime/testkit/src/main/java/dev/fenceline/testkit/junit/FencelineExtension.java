package dev.fenceline.testkit.junit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.testkit.SimNetwork;
import java.time.Duration;
import java.util.Locale;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The JUnit 5 extension behind {@link FencelineTest}: starts an {@link ActorTestKit} with the sim
 * transport for the test class, binds a {@link Fenceline} to its actor system as an extension,
 * injects them (and {@link SimNetwork}, and a fresh {@link TestProbe} per parameter), and shuts it
 * all down after the class. It relies on JUnit 5's extension API only, not on Pekko's JUnit
 * integration classes.
 */
public final class FencelineExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver, TestWatcher {
    /** Environment variable: the sim's seed when the annotation leaves it at 0. */
    public static final String SEED_ENV = "FENCELINE_TEST_SEED";
    /** Environment variable: a factor for every test-kit timeout (slow CI). */
    public static final String TIME_FACTOR_ENV = "FENCELINE_TEST_TIME_FACTOR";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(FencelineExtension.class);

    /** What one test class gets. */
    private record Resources(ActorTestKit kit, Fenceline fenceline, SimNetwork network, long seed) {
    }

    /**
     * @param d a timeout
     * @return it multiplied by {@code FENCELINE_TEST_TIME_FACTOR} (1 when unset)
     */
    public static Duration dilated(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * timeFactor()));
    }

    private static double timeFactor() {
        String f = System.getenv(TIME_FACTOR_ENV);
        if (f == null || f.isBlank()) {
            return 1.0;
        }
        try {
            double v = Double.parseDouble(f.trim());
            if (v >= 1.0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(TIME_FACTOR_ENV + " = " + f + " is invalid: expected a number >= 1");
    }

    private static long seed(FencelineTest annotation) {
        if (annotation != null && annotation.seed() != 0) {
            return annotation.seed();
        }
        String env = System.getenv(SEED_ENV);
        if (env == null || env.isBlank()) {
            return 1;
        }
        try {
            return Long.parseLong(env.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SEED_ENV + " = " + env + " is invalid: expected an integer", e);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Class<?> test = context.getRequiredTestClass();
        FencelineTest annotation = test.getAnnotation(FencelineTest.class);
        long seed = seed(annotation);
        Config config = ConfigFactory.parseString(annotation == null ? "" : annotation.config())
                .withFallback(ConfigFactory.parseString(String.format(Locale.ROOT,
                        "fenceline.transports = [sim]%nfenceline.transport.sim.seed = %d%n"
                                + "pekko.actor.testkit.typed.timefactor = %s", seed, timeFactor())))
                .withFallback(ConfigFactory.load());
        ActorTestKit kit = ActorTestKit.create(test.getSimpleName(), config);
        try {
            Fenceline fenceline = Fenceline.get(kit.system());
            context.getStore(NS).put(Resources.class, new Resources(kit, fenceline, SimNetwork.of(fenceline), seed));
        } catch (RuntimeException e) {
            kit.shutdownTestKit();
            throw e;
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Resources r = context.getStore(NS).remove(Resources.class, Resources.class);
        if (r != null) {
            try {
                r.fenceline().close();
            } finally {
                r.kit().shutdownTestKit();
            }
        }
    }

    private static Resources resources(ExtensionContext context) {
        Resources r = context.getStore(NS).get(Resources.class, Resources.class);
        if (r == null) {
            throw new ParameterResolutionException("@FencelineTest resources are created per test class; is the"
                    + " class annotated (and not a nested class without it)?");
        }
        return r;
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        Class<?> t = p.getParameter().getType();
        return t == Fenceline.class || t == SimNetwork.class || t == ActorTestKit.class || t == TestProbe.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        Resources r = resources(e);
        Class<?> t = p.getParameter().getType();
        if (t == Fenceline.class) {
            return r.fenceline();
        }
        if (t == SimNetwork.class) {
            return r.network();
        }
        if (t == ActorTestKit.class) {
            return r.kit();
        }
        return r.kit().createTestProbe();
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        Resources r = context.getStore(NS).get(Resources.class, Resources.class);
        if (r != null) {
            System.err.printf("%s failed with sim seed %d; rerun with %s=%d mvn test -Dtest=%s#%s%n",
                    context.getDisplayName(), r.seed(), SEED_ENV, r.seed(), context.getRequiredTestClass().getName(),
                    context.getRequiredTestMethod().getName());
        }
    }
}
