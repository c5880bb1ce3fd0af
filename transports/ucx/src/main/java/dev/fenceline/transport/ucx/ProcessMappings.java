package dev.fenceline.transport.ucx;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a range of this process's address space is one peer's memory mapped here whole. UCT maps a
 * peer's shared-memory segment at the length the peer's packed key states, and this process then
 * reaches the peer's regions at the addresses and lengths the peer's key and key table state: every
 * one of those numbers is the peer's word. A range that ran past the mapping would have this
 * process's own stores land in whatever lies beyond it (its heap, its code), or fault; one that runs
 * past the end of the mapped file faults (SIGBUS) on first touch, in native code as in Java. So a
 * range is used only if it lies in one file mapping (or in consecutive mappings of the same file, at
 * consecutive offsets) and inside that file's current size, read from {@code /proc/self/maps} and
 * {@code /proc/self/map_files}. Read once per mapping a peer offers, never on the data path.
 */
final class ProcessMappings {
    /** The size of the file a mapping maps, by its range as {@code /proc/self/maps} spells it; -1 if unknown. */
    @FunctionalInterface
    interface FileSizes {
        long of(String range);
    }

    private static final FileSizes PROC = range -> {
        try {
            return Files.size(Path.of("/proc/self/map_files", range));
        } catch (IOException | SecurityException e) {
            return -1;
        }
    };

    private ProcessMappings() {
    }

    /**
     * @param address the range's first byte in this process
     * @param length its length
     * @return whether it lies whole in one mapped file (see the class comment); false if that cannot
     *     be read
     */
    static boolean reaches(long address, long length) {
        try (BufferedReader maps = Files.newBufferedReader(Path.of("/proc/self/maps"), StandardCharsets.US_ASCII)) {
            return reaches(maps, address, length, PROC);
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    /**
     * @param maps the lines of {@code /proc/<pid>/maps}, in address order
     * @param address the range's first byte
     * @param length its length
     * @param files the mapped files' sizes
     * @return whether the range lies whole in one mapped file (or consecutive mappings of it)
     * @throws IOException if the lines cannot be read
     */
    static boolean reaches(BufferedReader maps, long address, long length, FileSizes files) throws IOException {
        if (address <= 0 || length < 0 || length > Long.MAX_VALUE - address) {
            return false;
        }
        long end = address + length;
        Line first = null;
        Line last = null;
        String text;
        while ((text = maps.readLine()) != null) {
            Line l = Line.parse(text);
            if (l == null) {
                return false; // not the format this reads: nothing is vouched for
            }
            if (first == null) {
                if (address >= l.start && address < l.end) {
                    if (l.inode == 0) {
                        return false; // not a file: not a peer's segment
                    }
                    first = l;
                    last = l;
                }
            } else if (l.start == last.end && l.device.equals(first.device) && l.inode == first.inode
                    && l.offset == last.offset + (last.end - last.start)) {
                last = l; // the same file, continued (a mapping split in two)
            } else {
                break;
            }
            if (last != null && end <= last.end) {
                break;
            }
        }
        if (first == null || end > last.end) {
            return false;
        }
        long size = files.of(last.range);
        return size >= 0 && last.offset + (end - last.start) <= size;
    }

    /** One line of the maps file: {@code start-end perms offset major:minor inode [path]}. */
    private record Line(String range, long start, long end, long offset, String device, long inode) {
        static Line parse(String text) {
            String[] f = text.trim().split("\\s+", 7);
            if (f.length < 5) {
                return null;
            }
            int dash = f[0].indexOf('-');
            if (dash < 1) {
                return null;
            }
            try {
                long start = Long.parseUnsignedLong(f[0], 0, dash, 16);
                long end = Long.parseUnsignedLong(f[0], dash + 1, f[0].length(), 16);
                long offset = Long.parseUnsignedLong(f[2], 16);
                long inode = Long.parseUnsignedLong(f[4]);
                if (start < 0 || end < start || offset < 0) {
                    return null; // above any user-space address
                }
                return new Line(f[0], start, end, offset, f[3], inode);
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }
}
