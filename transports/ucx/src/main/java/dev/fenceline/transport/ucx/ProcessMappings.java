package dev.fenceline.transport.ucx;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a range of this process's address space is a peer's shared memory that unpacking its key
 * just mapped here, whole. UCT maps a peer's shared-memory segment at the address and length the
 * peer's packed key states, and this process then reaches the peer's regions at the addresses and
 * lengths the peer's key and key table state: every one of those numbers is the peer's word. A range
 * elsewhere would have this process's own stores land in its own memory (its heap, its code, the
 * libraries' data), or fault; one past the end of the mapped file faults (SIGBUS) on first touch, in
 * native code as in Java. So a range is used only if it lies in one shared mapping of a
 * shared-memory segment (a file under /dev/shm, UCT's posix, or a System V segment) that overlaps
 * no mapping of the same file from before the unpack ({@link #snapshot} then {@link #reaches}, from
 * {@code /proc/self/maps}), and its last byte can be read (a write of it into a pipe: the kernel
 * answers EFAULT past the file's end where a load would fault). Read on the progress agent at a
 * key's first use, twice (before and after the unpack), not per operation.
 *
 * <p>What this cannot see: another thread of this process mapping a segment between the snapshot
 * and the check (this library's agents, or the application); a key whose packed part names one of
 * this process's own segment files (UCT opens the file the key names), which then maps this
 * process's own exported memory again; and a file the owner cuts short later, or a full
 * shared-memory file system that cannot back a page on its first write: such a page faults here.
 */
final class ProcessMappings {
    /** The mappings of this process at one moment: their address ranges, sorted, and their files. */
    static final class Snapshot {
        /** Start and end of each mapping, in address order; null if the maps could not be read. */
        private final long[] bounds;
        /** The device and inode of each mapping's file (0:0 inode 0 for anonymous memory). */
        private final String[] files;

        private Snapshot(long[] bounds, String[] files) {
            this.bounds = bounds;
            this.files = files;
        }

        /**
         * @param file the device and inode of a mapping now in [start, end)
         * @return whether the same file was mapped in [start, end) already (a snapshot that could not
         *     be read says it was): a mapping that overlaps an old one of its file, split or grown
         *     from it, is not new; memory of something else there before was unmapped since
         */
        boolean overlaps(long start, long end, String file) {
            if (bounds == null) {
                return true;
            }
            int lo = 0;
            int hi = bounds.length / 2;
            while (lo < hi) { // the first mapping that ends after start
                int mid = (lo + hi) >>> 1;
                if (bounds[2 * mid + 1] <= start) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            for (int i = lo; i < bounds.length / 2 && bounds[2 * i] < end; i++) {
                if (files[i].equals(file)) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final Snapshot UNREADABLE = new Snapshot(null, null);

    private ProcessMappings() {
    }

    /** @return this process's mappings now (before an unpack) */
    static Snapshot snapshot() {
        try {
            return snapshot(read());
        } catch (IOException | SecurityException e) {
            return UNREADABLE;
        }
    }

    /** @return the mappings the lines of a maps file name */
    static Snapshot snapshot(String maps) throws IOException {
        long[] bounds = new long[64];
        String[] files = new String[32];
        int n = 0;
        BufferedReader r = new BufferedReader(new StringReader(maps));
        for (String text; (text = r.readLine()) != null;) {
            Line l = Line.parse(text);
            if (l != null) {
                if (n + 2 > bounds.length) {
                    bounds = java.util.Arrays.copyOf(bounds, 2 * bounds.length);
                    files = java.util.Arrays.copyOf(files, bounds.length / 2);
                }
                files[n / 2] = l.file();
                bounds[n++] = l.start;
                bounds[n++] = l.end;
            }
        }
        return new Snapshot(java.util.Arrays.copyOf(bounds, n), java.util.Arrays.copyOf(files, n / 2));
    }

    /** Every byte as one character: a mapped file's name may be in any encoding. */
    private static String read() throws IOException {
        return Files.readString(Path.of("/proc/self/maps"), StandardCharsets.ISO_8859_1);
    }

    /**
     * @param before the mappings before the unpack
     * @param address the range's first byte in this process
     * @param length its length
     * @return whether it lies whole in one shared mapping of a shared-memory segment that overlaps
     *     no mapping of its file in {@code before}, and its last byte can be read; false if any of that
     *     cannot be read
     */
    static boolean reaches(Snapshot before, long address, long length) {
        try {
            return within(read(), before, address, length) && readable(address, length);
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    /**
     * @param maps the lines of {@code /proc/<pid>/maps}, in address order
     * @param before the mappings before the unpack
     * @param address the range's first byte
     * @param length its length
     * @return whether the range lies whole in one shared mapping of a shared-memory segment that
     *     overlaps no mapping of its file in {@code before} (or in consecutive pieces of it: a mapping split in two)
     * @throws IOException if the lines cannot be read
     */
    static boolean within(String maps, Snapshot before, long address, long length) throws IOException {
        if (address <= 0 || length < 0 || length > Long.MAX_VALUE - address) {
            return false;
        }
        long end = address + length;
        BufferedReader r = new BufferedReader(new StringReader(maps));
        Line first = null;
        Line last = null;
        for (String text; (text = r.readLine()) != null;) {
            Line l = Line.parse(text);
            if (l == null) {
                continue; // not a line this reads (above any user address): it names nothing looked for
            }
            if (first == null) {
                if (address >= l.start && address < l.end) {
                    if (!l.shared || !l.segment || before.overlaps(l.start, l.end, l.file())) {
                        // not a shared-memory segment (known by its path: a System V segment's inode
                        // is its id, 0 for a host's first), or there before the unpack
                        return false;
                    }
                    first = l;
                    last = l;
                }
            } else if (l.start == last.end && l.shared && l.device.equals(first.device) && l.inode == first.inode
                    && l.offset == last.offset + (last.end - last.start) && !before.overlaps(l.start, l.end, l.file())) {
                last = l; // the same file, continued
            } else {
                break;
            }
            if (last != null && end <= last.end) {
                break;
            }
        }
        return first != null && end <= last.end;
    }

    /**
     * Whether the range's last byte can be read, asked of the kernel: it copies the byte into a pipe,
     * and answers EFAULT instead of faulting where the page lies past the end of the mapped file. A
     * range in one mapping of one file at rising offsets is readable up to its last byte if that is.
     */
    static boolean readable(long address, long length) {
        if (length == 0) {
            return true;
        }
        ByteBuffer last = com.kenai.jffi.MemoryIO.getInstance().newDirectByteBuffer(address + length - 1, 1);
        Pipe p;
        try {
            p = Pipe.open();
        } catch (IOException e) {
            return false; // out of file descriptors: nothing vouched for
        }
        try {
            p.sink().configureBlocking(false);
            return p.sink().write(last) == 1;
        } catch (IOException e) {
            return false; // "Bad address": past the file's end
        } finally {
            close(p.sink());
            close(p.source());
        }
    }

    private static void close(java.nio.channels.Channel c) {
        try {
            c.close();
        } catch (IOException e) {
            // a pipe end that cannot be closed has nothing to lose
        }
    }

    /**
     * One line of the maps file: {@code start-end perms offset major:minor inode [path]}; a segment
     * is a file of the shared-memory file system (UCT's posix) or a System V segment.
     */
    private record Line(long start, long end, boolean shared, long offset, String device, long inode,
            boolean segment) {
        /** @return the mapping's file, as device and inode */
        String file() {
            return device + " " + inode;
        }

        static Line parse(String text) {
            String[] f = text.trim().split("\\s+", 7);
            if (f.length < 5 || f[1].length() < 4) {
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
                String path = f.length > 5 ? f[5] : "";
                return new Line(start, end, f[1].charAt(3) == 's', offset, f[3], inode,
                        path.startsWith("/dev/shm/") || path.startsWith("/SYSV"));
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }
}
