package dev.fenceline.perf;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A message size on the command line: bytes, or with a K, KiB, M or MiB suffix (any case), from
 * 1 byte to 64 MiB. A bad one is a usage error naming it, not a stack trace.
 */
public final class SizeConverter implements ITypeConverter<Integer> {
    /** The largest size accepted. */
    public static final int MAX = 64 << 20;

    @Override
    public Integer convert(String text) {
        String v = text.trim().toUpperCase(Locale.ROOT);
        long unit = 1;
        for (String[] suffix : new String[][] {{"KIB", "1024"}, {"MIB", "1048576"}, {"K", "1024"}, {"M", "1048576"}}) {
            if (v.endsWith(suffix[0])) {
                unit = Long.parseLong(suffix[1]);
                v = v.substring(0, v.length() - suffix[0].length());
                break;
            }
        }
        long n;
        try {
            n = Math.multiplyExact(Long.parseLong(v), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new TypeConversionException("'" + text + "' is not a size: expected bytes, or a number with K,"
                    + " KiB, M or MiB, e.g. 8, 64K, 1M");
        }
        if (n < 1 || n > MAX) {
            throw new TypeConversionException("size '" + text + "' is outside 1 byte to 64 MiB");
        }
        return (int) n;
    }
}
