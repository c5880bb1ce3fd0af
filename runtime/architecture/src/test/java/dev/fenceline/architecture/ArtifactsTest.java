package dev.fenceline.architecture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a service depending on Fenceline gets: every jar names its module (Automatic-Module-Name,
 * distinct, under dev.fenceline) and carries the license and notice, and the BOM manages every
 * artifact a service uses, at the project's version.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ArtifactsTest {
    /** The artifacts a service depends on; the BOM must manage each. */
    private static final Set<String> PUBLISHED = Set.of("fenceline-runtime", "fenceline-testkit",
            "fenceline-transport-sim", "fenceline-transport-tcp", "fenceline-transport-shm", "fenceline-transport-ucx",
            "fenceline-affinity",
            "fenceline-micrometer",
            "fenceline-cluster");

    /** Fenceline's jars on this module's test classpath, by file name, with their manifests. */
    private static Map<String, Manifest> fencelineJars() throws IOException {
        Map<String, Manifest> jars = new TreeMap<>();
        for (URL u : Collections.list(ArtifactsTest.class.getClassLoader().getResources("META-INF/MANIFEST.MF"))) {
            String where = u.toString();
            Matcher m = Pattern.compile("/(fenceline-[a-z-]+)-[0-9][^/]*\\.jar!").matcher(where);
            if (m.find()) {
                try (var in = u.openStream()) {
                    jars.put(m.group(1), new Manifest(in));
                }
            }
        }
        return jars;
    }

    @Test
    void everyJarNamesItsModuleAndCarriesTheLicense() throws IOException {
        Map<String, Manifest> jars = fencelineJars();
        // Under `mvn verify` the reactor hands over packaged jars; a bare `mvn test` hands over classes.
        Assumptions.assumeTrue(jars.keySet().containsAll(PUBLISHED), "no packaged jars to check: " + jars.keySet());
        Set<String> names = new TreeSet<>();
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Manifest> e : jars.entrySet()) {
            String name = e.getValue().getMainAttributes().getValue("Automatic-Module-Name");
            if (name == null || !name.matches("dev\\.fenceline(\\.[a-z]+)+")) {
                problems.add(e.getKey() + ": Automatic-Module-Name " + name);
            } else if (!names.add(name)) {
                problems.add(e.getKey() + ": Automatic-Module-Name " + name + " is taken");
            }
        }
        assertEquals(List.of(), problems);
        for (String notice : new String[] {"META-INF/LICENSE", "META-INF/NOTICE"}) {
            long carrying = Collections.list(getClass().getClassLoader().getResources(notice)).stream()
                    .filter(u -> u.toString().contains("/fenceline-")).count();
            assertEquals(jars.size(), carrying, notice + " in every Fenceline jar");
        }
    }

    @Test
    void theBomManagesEveryPublishedArtifactAtTheProjectsVersion() throws IOException {
        String bom = Files.readString(Path.of("..", "bom", "pom.xml"));
        String parent = Files.readString(Path.of("..", "..", "pom.xml"));
        Matcher version = Pattern.compile("<artifactId>fenceline-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(parent);
        assertTrue(version.find(), "the project's version in the root pom");
        assertTrue(bom.contains("<artifactId>fenceline-bom</artifactId>\n  <version>" + version.group(1) + "</version>"),
                "the BOM's version is the project's, " + version.group(1));
        assertTrue(!bom.contains("<parent>"), "the BOM manages Fenceline's artifacts only");
        Set<String> managed = new TreeSet<>();
        Matcher m = Pattern.compile("<artifactId>(fenceline-[a-z-]+)</artifactId>\\s*<version>\\$\\{project.version}")
                .matcher(bom);
        while (m.find()) {
            managed.add(m.group(1));
        }
        assertEquals(new TreeSet<>(PUBLISHED), managed);
    }

    @Test
    void theDownstreamExampleBuildsAgainstThisVersionOutsideTheReactor() throws IOException {
        String parent = Files.readString(Path.of("..", "..", "pom.xml"));
        Matcher version = Pattern.compile("<artifactId>fenceline-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(parent);
        assertTrue(version.find(), "the project's version in the root pom");
        String downstream = Files.readString(Path.of("..", "..", "examples", "downstream", "pom.xml"));
        assertTrue(downstream.contains("<fenceline.version>" + version.group(1) + "</fenceline.version>"),
                "examples/downstream builds against " + version.group(1));
        assertTrue(!downstream.contains("<parent>") && downstream.contains("<artifactId>fenceline-bom</artifactId>"),
                "no parent: it sees Fenceline only through the BOM and the installed artifacts");
        String readme = Files.readString(Path.of("..", "..", "README.md"));
        assertTrue(readme.contains("<artifactId>fenceline-bom</artifactId>\n      <version>" + version.group(1)
                + "</version>"), "the README's dependency snippet names " + version.group(1));
        String examples = Files.readString(Path.of("..", "..", "examples", "pom.xml"));
        assertTrue(!examples.contains("<module>downstream</module>"), "not a module of the reactor");
    }
}
