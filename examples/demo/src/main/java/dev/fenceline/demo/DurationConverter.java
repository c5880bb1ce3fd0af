package dev.fenceline.demo;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A duration on the command line: a positive number with ms, s or m, e.g. 500ms, 2s. */
public final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String text) {
        String v = text.trim().toLowerCase(Locale.ROOT);
        try {
            Duration d;
            if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            } else {
                throw new NumberFormatException();
            }
            if (d.isNegative() || d.isZero()) {
                throw new TypeConversionException("duration '" + text + "' must be positive");
            }
            return d;
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + text + "' is not a duration: expected e.g. 500ms, 2s or 1m");
        }
    }
}
