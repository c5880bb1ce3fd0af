package dev.fenceline.spi.support;

import dev.fenceline.ConfigurationException;

/**
 * Agrona 2's buffers use {@code jdk.internal.misc.Unsafe}, which the JVM opens only with a flag: a
 * transport built on them checks for it when it starts, so that a missing flag is a clear
 * configuration error rather than an {@link IllegalAccessError} at the first operation.
 */
public final class AgronaAccess {
    private AgronaAccess() {
    }

    /**
     * @param transport the transport's name, for the message
     * @throws ConfigurationException naming the flag, if Agrona's buffers cannot be used
     */
    public static void require(String transport) {
        try {
            new org.agrona.concurrent.UnsafeBuffer(new byte[8]).putLong(0, 1);
        } catch (IllegalAccessError | ExceptionInInitializerError | NoClassDefFoundError e) {
            throw new ConfigurationException("the " + transport + " transport needs the JVM flag --add-exports"
                    + " java.base/jdk.internal.misc=ALL-UNNAMED (Agrona's buffers use jdk.internal.misc.Unsafe;"
                    + " see docs/decisions/0003): " + e);
        }
    }
}
