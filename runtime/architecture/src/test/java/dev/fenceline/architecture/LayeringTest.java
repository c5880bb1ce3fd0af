package dev.fenceline.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Who may depend on whom, checked on every module's main classes (tests and generated benchmark
 * code aside): transports use only the public API, the SPI and Pekko's typed actor API (their
 * control actors), the SPI knows no runtime actor and of Pekko only the typed actor API it spawns
 * transport actors with, examples and the test kit use only the public API (and the examples the
 * test kit), and no package is split across jars.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LayeringTest {
    private static JavaClasses all;

    @BeforeAll
    static void importMainClasses() {
        all = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("/jmh_generated/"))
                .importPackages("dev.fenceline");
        // A precondition: an empty import would make every rule below pass.
        for (String p : new String[] {"dev.fenceline.actor", "dev.fenceline.spi", "dev.fenceline.transport.tcp",
            "dev.fenceline.transport.shm", "dev.fenceline.transport.sim", "dev.fenceline.transport.ucx", "dev.fenceline.testkit", "dev.fenceline.demo",
            "dev.fenceline.perf", "dev.fenceline.micrometer", "dev.fenceline.cluster",
            "dev.fenceline.bench", "dev.fenceline.affinity"}) {
            assertTrue(all.containPackage(p), "no classes of " + p + " were imported");
        }
    }

    @Test
    void cpuAffinityUsesOnlyThePublicApiAndTheSpisSupport() {
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes().that().resideInAPackage("dev.fenceline.affinity..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("dev.fenceline", "dev.fenceline.affinity..",
                        "dev.fenceline.spi.support..", "java..", "jnr.ffi..", "org.slf4j..", "com.typesafe.config..")
                .check(all);
    }

    @Test
    void transportsUseOnlyThePublicApiTheSpiAndTypedActors() {
        noClasses().that().resideInAPackage("dev.fenceline.transport..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.fenceline.actor..", "dev.fenceline.internal..",
                        "dev.fenceline.testkit..", "dev.fenceline.demo..", "dev.fenceline.perf..")
                .check(all);
        // Of Pekko, only the typed actor API: no classic actors, streams, remoting or cluster.
        noClasses().that().resideInAPackage("dev.fenceline.transport..")
                .should().dependOnClassesThat(com.tngtech.archunit.base.DescribedPredicate.describe(
                        "Pekko outside the typed actor API", (com.tngtech.archunit.core.domain.JavaClass c) ->
                                c.getPackageName().startsWith("org.apache.pekko")
                                        && !c.getPackageName().startsWith("org.apache.pekko.actor.typed")))
                .check(all);
    }

    @Test
    void transportsDoNotDependOnEachOther() {
        String[] transports = {"tcp", "shm", "sim", "ucx"};
        for (String t : transports) {
            for (String other : transports) {
                if (!other.equals(t)) {
                    noClasses().that().resideInAPackage("dev.fenceline.transport." + t + "..")
                            .should().dependOnClassesThat().resideInAPackage("dev.fenceline.transport." + other + "..")
                            .check(all);
                }
            }
        }
    }

    @Test
    void theSpiKnowsNoRuntimeActorNoInternalsAndOfPekkoOnlyBehaviorAndActorRef() {
        noClasses().that().resideInAPackage("dev.fenceline.spi..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.fenceline.actor..", "dev.fenceline.internal..",
                        "dev.fenceline.transport..", "dev.fenceline.testkit..", "scala..")
                .check(all);
        noClasses().that().resideInAPackage("dev.fenceline.spi..")
                .should().dependOnClassesThat(com.tngtech.archunit.base.DescribedPredicate.describe(
                        "Pekko types other than Behavior and ActorRef", (com.tngtech.archunit.core.domain.JavaClass c) ->
                                c.getPackageName().startsWith("org.apache.pekko")
                                        && !c.getName().equals("org.apache.pekko.actor.typed.Behavior")
                                        && !c.getName().equals("org.apache.pekko.actor.typed.ActorRef")))
                .check(all);
    }

    @Test
    void examplesUseOnlyThePublicApiAndTheTestKit() {
        noClasses().that().resideInAnyPackage("dev.fenceline.demo..", "dev.fenceline.perf..",
                "dev.fenceline.examples..", "dev.fenceline.bench..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.fenceline.actor..", "dev.fenceline.internal..",
                        "dev.fenceline.spi..", "dev.fenceline.transport..", "dev.fenceline.transport.sim..")
                .check(all);
    }

    @Test
    void theTestKitUsesThePublicApiAndTheSimTransport() {
        noClasses().that().resideInAPackage("dev.fenceline.testkit..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.fenceline.actor..", "dev.fenceline.internal..",
                        "dev.fenceline.transport.tcp..", "dev.fenceline.transport.shm..")
                .check(all);
    }

    @Test
    void theMetricsBinderSeesOnlyThePublicApi() {
        noClasses().that().resideInAPackage("dev.fenceline.micrometer..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.fenceline.actor..", "dev.fenceline.internal..",
                        "dev.fenceline.spi..", "dev.fenceline.transport..", "dev.fenceline.testkit..",
                        "org.apache.pekko..")
                .check(all);
    }

    @Test
    void theClusterModuleSeesOnlyThePublicApi() {
        noClasses().that().resideInAPackage("dev.fenceline.cluster..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.fenceline.actor..", "dev.fenceline.internal..",
                        "dev.fenceline.spi..", "dev.fenceline.transport..", "dev.fenceline.testkit..")
                .check(all);
    }

    @Test
    void thePublicApiDoesNotExposeTransports() {
        classes().that().resideInAPackage("dev.fenceline")
                .should().onlyDependOnClassesThat().resideOutsideOfPackages("dev.fenceline.transport..",
                        "dev.fenceline.testkit..")
                .check(all);
    }

    @Test
    void noPackageIsSplitAcrossJars() {
        Map<String, Set<String>> jarsByPackage = new TreeMap<>();
        for (JavaClass c : all) {
            URI where = c.getSource().orElseThrow().getUri();
            jarsByPackage.computeIfAbsent(c.getPackageName(), p -> new TreeSet<>()).add(module(where));
        }
        Map<String, Set<String>> split = new TreeMap<>();
        jarsByPackage.forEach((p, jars) -> {
            if (jars.size() > 1) {
                split.put(p, jars);
            }
        });
        assertEquals(Map.of(), split, "packages whose classes come from more than one jar");
        assertTrue(jarsByPackage.size() > 10, "imported packages: " + jarsByPackage.keySet());
    }

    /** The jar, or the module's classes directory, that a class file comes from. */
    private static String module(URI classFile) {
        String s = classFile.toString();
        int jar = s.indexOf("!/");
        if (jar >= 0) {
            return s.substring(0, jar);
        }
        int classes = s.indexOf("/target/classes/");
        return classes >= 0 ? s.substring(0, classes) : s;
    }
}
