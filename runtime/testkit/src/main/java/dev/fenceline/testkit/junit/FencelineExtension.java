package dev.fenceline.testkit.junit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.testkit.SimNetwork;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link FencelineTest}: starts an {@link ActorTestKit} with the sim
 * transport, binds a {@link Fenceline} to its actor system as an extension, injects them (and
 * {@link SimNetwork}, and a fresh {@link TestProbe} per parameter), and shuts it all down when the
 * class (or, per method, the test) is done: they live in JUnit's store as an {@link AutoCloseable},
 * which JUnit closes with the context that holds it. It relies on JUnit 5's extension API only,
 * not on Pekko's JUnit integration classes.
 */
public final class FencelineExtension
        implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {
    /** Environment variable: the sim's seed when the annotation leaves it at 0. */
    public static final String SEED_ENV = "FENCELINE_TEST_SEED";
    /** Environment variable: a factor for every test-kit timeout (slow CI). */
    public static final String TIME_FACTOR_ENV = "FENCELINE_TEST_TIME_FACTOR";
    /** The report entry that carries each test's seed. */
    public static final String SEED_ENTRY = "fenceline.seed";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(FencelineExtension.class);

    /** What one class (or one test) gets; JUnit closes it with the context whose store holds it. */
    private record Resources(ActorTestKit kit, Fenceline fenceline, SimNetwork network, long seed)
            implements AutoCloseable {
        @Override
        public void close() {
            try {
                fenceline.close();
            } finally {
                kit.shutdownTestKit();
            }
        }
    }

    /** The annotation that applies to a test class, and the class that carries it. */
    private record Found(FencelineTest annotation, Class<?> owner) {
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

    /** The class's own annotation (or a superclass's), else the nearest enclosing class's (@Nested). */
    private static Found find(Class<?> test) {
        for (Class<?> c = test; c != null; c = Modifier.isStatic(c.getModifiers()) ? null : c.getEnclosingClass()) {
            Optional<FencelineTest> a = AnnotationSupport.findAnnotation(c, FencelineTest.class);
            if (a.isPresent()) {
                return new Found(a.get(), c);
            }
        }
        return new Found(null, test);
    }


    private static boolean perMethod(Found f) {
        return f.annotation() != null && f.annotation().lifecycle() == FencelineTest.Lifecycle.PER_METHOD;
    }

    private static Resources start(Found found, String name) {
        long seed = seed(found.annotation());
        Config config = ConfigFactory.parseString(found.annotation() == null ? "" : found.annotation().config())
                .withFallback(ConfigFactory.parseString(String.format(Locale.ROOT,
                        "fenceline.transports = [sim]%nfenceline.transport.sim.seed = %d%n"
                                + "pekko.actor.testkit.typed.timefactor = %s", seed, timeFactor())))
                .withFallback(ConfigFactory.load());
        ActorTestKit kit = ActorTestKit.create(name, config);
        try {
            Fenceline fenceline = Fenceline.get(kit.system());
            return new Resources(kit, fenceline, SimNetwork.of(fenceline), seed);
        } catch (RuntimeException e) {
            kit.shutdownTestKit();
            throw e;
        }
    }

    /**
     * The resources that apply in this context, started on first use: per class, in the store of the
     * class that carries the annotation (so a nested class without one shares them); per method, in
     * the test's own store.
     */
    private static Resources resources(ExtensionContext context) {
        return resources(context, context.getRequiredTestClass());
    }

    /** @param from the class whose annotation applies: the test class, or an enclosing one whose constructor asks */
    private static Resources resources(ExtensionContext context, Class<?> from) {
        Found found = find(from);
        if (perMethod(found)) {
            if (context.getTestMethod().isEmpty()) {
                throw new ParameterResolutionException("@FencelineTest(lifecycle = PER_METHOD) starts a runtime for"
                        + " each test method; there is none in " + context.getDisplayName());
            }
            return context.getStore(NS).getOrComputeIfAbsent(context.getRequiredTestMethod(),
                    k -> start(found, context.getRequiredTestClass().getSimpleName() + "-"
                            + context.getRequiredTestMethod().getName()), Resources.class);
        }
        ExtensionContext owner = context;
        while (owner.getTestClass().orElse(null) != found.owner() || owner.getTestMethod().isPresent()) {
            owner = owner.getParent().orElseThrow(() -> new ParameterResolutionException(
                    "no class context for " + found.owner().getName()));
        }
        ExtensionContext classContext = owner;
        // Keyed by the owning class: the store also answers with its parents' values, and an enclosing
        // class's runtime must not stand in for a nested class's own.
        return classContext.getStore(NS).getOrComputeIfAbsent(found.owner(),
                k -> start(found, found.owner().getSimpleName()), Resources.class);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Found found = find(context.getRequiredTestClass());
        if (!perMethod(found) && found.owner() == context.getRequiredTestClass()) {
            resources(context); // started before any test, so that its start-up is not timed with the first
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Resources r = resources(context);
        context.publishReportEntry(SEED_ENTRY, Long.toString(r.seed()));
        Found found = find(context.getRequiredTestClass());
        boolean capture = found.annotation() == null || found.annotation().captureLogs();
        boolean parallel = context.getConfigurationParameter("junit.jupiter.execution.parallel.enabled")
                .map(Boolean::parseBoolean).orElse(false);
        if (capture && !parallel && LogCapture.available()) {
            context.getStore(NS).put(LogCapture.class, LogCapture.start());
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        boolean failed = context.getExecutionException().isPresent();
        LogCapture capture = context.getStore(NS).remove(LogCapture.class, LogCapture.class);
        if (capture != null) {
            capture.stop(failed, context.getRequiredTestClass().getSimpleName() + "#"
                    + context.getRequiredTestMethod().getName());
        }
        if (failed) {
            long seed = resources(context).seed();
            System.err.printf("%s failed with sim seed %d; rerun with %s=%d mvn test -Dtest=%s#%s%n",
                    context.getDisplayName(), seed, SEED_ENV, seed, context.getRequiredTestClass().getName(),
                    context.getRequiredTestMethod().getName());
        }
    }

    @Override
    public ExtensionContextScope getTestInstantiationExtensionContextScope(ExtensionContext rootContext) {
        return ExtensionContextScope.TEST_METHOD; // a constructor's parameters, per method, come from that test's runtime
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        Class<?> t = p.getParameter().getType();
        return t == Fenceline.class || t == SimNetwork.class || t == ActorTestKit.class || t == TestProbe.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        // An enclosing class's constructor, run for a nested class's test, gets the enclosing class's runtime.
        Class<?> test = e.getRequiredTestClass();
        Class<?> declaring = p.getDeclaringExecutable().getDeclaringClass();
        Resources r = resources(e, declaring.isAssignableFrom(test) ? test : declaring);
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
}
