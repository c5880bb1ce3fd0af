package dev.fenceline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The layout of a counters file ({@code <pid>-<n>.stat}): a header, then fixed 128-byte counter
 * records. Plain memory-mapped bytes with acquire/release access through VarHandles, so that
 * neither side needs a JVM flag (Agrona's counters need {@code jdk.internal.misc} opened).
 *
 * <pre>
 * header                                    counter record (at 128 + 128 x slot)
 *   0  int   magic, "FLST"                    0  int   state: 0 free, 1 in use
 *   4  int   version                          4  int   generation, bumped when the slot is taken
 *   8  long  pid                              8  long  value
 *  16  long  start, epoch ms                 16  int   type id (StatCounter)
 *  24  int   counters (slots)                20  int   owner length, UTF-8 bytes
 *  32  long  last update, epoch ms           24  byte[104] owner (a worker's or an endpoint's name)
 *  40  long  update interval, ms
 * </pre>
 *
 * The writer stores the magic number last, so a reader that sees it sees the rest of the header. It
 * fills a record and then sets its state with a release store; a reader takes the generation before
 * and after reading a record and ignores the record if it changed (the slot was reused meanwhile).
 */
public final class StatLayout {
    /** "FLST" read as a little-endian int. */
    public static final int MAGIC = 0x54534c46;
    /** This layout's version. */
    public static final int VERSION = 1;
    /** Where the magic number is. */
    public static final int MAGIC_OFFSET = 0;
    /** Where the version is. */
    public static final int VERSION_OFFSET = 4;
    /** Where the writer's process id is. */
    public static final int PID_OFFSET = 8;
    /** Where the writer's start time is. */
    public static final int START_OFFSET = 16;
    /** Where the number of counter slots is. */
    public static final int COUNTERS_OFFSET = 24;
    /** Where the time of the last update is. */
    public static final int UPDATED_OFFSET = 32;
    /** Where the update interval is. */
    public static final int INTERVAL_OFFSET = 40;
    /** The header's length; the first record starts here. */
    public static final int HEADER_LENGTH = 128;
    /** One counter record's length. */
    public static final int RECORD_LENGTH = 128;
    /** In a record: 1 when in use. */
    public static final int STATE_OFFSET = 0;
    /** In a record: bumped each time the slot is taken. */
    public static final int GENERATION_OFFSET = 4;
    /** In a record: the value. */
    public static final int VALUE_OFFSET = 8;
    /** In a record: the type id. */
    public static final int TYPE_OFFSET = 16;
    /** In a record: the owner name's length. */
    public static final int OWNER_LENGTH_OFFSET = 20;
    /** In a record: the owner name's bytes. */
    public static final int OWNER_OFFSET = 24;
    /** The longest owner name a record holds, in UTF-8 bytes. */
    public static final int MAX_OWNER_BYTES = RECORD_LENGTH - OWNER_OFFSET;
    /** A record's state when in use. */
    public static final int IN_USE = 1;
    /** The file name's ending. */
    public static final String SUFFIX = ".stat";

    /** Int access with memory ordering, on a mapped buffer in native order. */
    public static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    /** Long access with memory ordering, on a mapped buffer in native order. */
    public static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private StatLayout() {
    }

    /**
     * @param counters how many counter slots
     * @return the file's length
     */
    public static long fileLength(int counters) {
        return HEADER_LENGTH + (long) counters * RECORD_LENGTH;
    }

    /**
     * @param slot a counter slot
     * @return where its record starts
     */
    public static int record(int slot) {
        return HEADER_LENGTH + slot * RECORD_LENGTH;
    }

    /**
     * @return {@code /dev/shm/fenceline-<user>} where {@code /dev/shm} is a directory, else
     *     {@code <java.io.tmpdir>/fenceline-<user>}
     */
    public static Path defaultDirectory() {
        String dir = "fenceline-" + System.getProperty("user.name", "user");
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm.resolve(dir)
                : Path.of(System.getProperty("java.io.tmpdir")).resolve(dir);
    }

    /**
     * @param file a counters file's name
     * @return the process id in its name, or -1 if it is not named like one
     */
    public static long pidOf(Path file) {
        String name = file.getFileName().toString();
        int dash = name.indexOf('-');
        if (!name.endsWith(SUFFIX) || dash <= 0) {
            return -1;
        }
        try {
            long pid = Long.parseLong(name.substring(0, dash));
            Integer.parseInt(name.substring(dash + 1, name.length() - SUFFIX.length()));
            return pid > 0 ? pid : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
