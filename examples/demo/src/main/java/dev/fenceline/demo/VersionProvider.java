package dev.fenceline.demo;

import dev.fenceline.Fenceline;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: the runtime's version as built, and the JVM it runs on. */
public final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        return new String[] {"fenceline " + Fenceline.version(),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"};
    }
}
