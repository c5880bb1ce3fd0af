package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.junit.jupiter.api.Test;

/**
 * Fixed-size answers take whole cache lines of an inbox ring that starts on one, so that where the
 * records before them fill whole lines too (an 8-byte active message does), the origin's reader and
 * the target writing the next answer never share a line; the readers still see each answer's own
 * fields, whether it went straight into the ring or waited in the backlog.
 */
class ReplyLinesTest {
    private static final int LINE = 64;

    @Test
    void fixedSizeAnswersAreClaimedAsWholeLinesAndTheOthersAsTheyAre() {
        for (int type : new int[] {ShmWire.CONNECTED, ShmWire.ACK, ShmWire.FLUSHED, ShmWire.NACK, ShmWire.RESET}) {
            for (int length : new int[] {8, 12, 16, 24, 56, 57, 200, 20 + ShmWire.MAX_TEXT}) {
                int claimed = ShmWire.claimLength(type, length);
                assertTrue(claimed >= length, ShmWire.name(type) + " of " + length + " claimed " + claimed);
                assertEquals(0, (claimed + RecordDescriptor.HEADER_LENGTH) % LINE,
                        ShmWire.name(type) + " of " + length + " claimed " + claimed + " bytes");
                assertTrue(claimed - length < LINE, "less than a line of padding: " + claimed + " for " + length);
            }
        }
        // Their readers take the data's length from the record's size: never padded.
        for (int type : new int[] {ShmWire.PUT, ShmWire.AM, ShmWire.GET_DATA, ShmWire.CONNECT}) {
            assertEquals(24, ShmWire.claimLength(type, 24), ShmWire.name(type));
        }
    }

    @Test
    void theRingStartsOnALineWhateverTheTablesBeforeIt() throws Exception {
        Path dir = Files.createTempDirectory("fenceline-reply-lines");
        try {
            for (int gateSlots : new int[] {1, 3, 4, 5}) {
                Path file = dir.resolve(Segments.processPrefix() + "control-" + gateSlots);
                Inbox own = Inbox.create(file, 64 << 10, 1, gateSlots, UUID.randomUUID(), true);
                try {
                    Inbox peer = Inbox.open(file, true);
                    try {
                        assertEquals(0, own.ring.buffer().addressOffset() % LINE, gateSlots + " gate slots, own");
                        assertEquals(0, peer.ring.buffer().addressOffset() % LINE, gateSlots + " gate slots, peer's");
                    } finally {
                        peer.unmap();
                    }
                } finally {
                    own.unmap();
                }
            }
        } finally {
            delete(dir);
        }
    }

    @Test
    void answersInARowEachStartALineAndReadAsWritten() throws Exception {
        withInbox(to -> {
            List<String> dropped = new ArrayList<>();
            ShmReplies replies = new ShmReplies(1 << 20, dropped::add);
            for (long token = 1; token <= 5; token++) {
                assertTrue(replies.reply(to, ShmWire.ACK, 24, ack(token)));
            }
            assertTrue(replies.reply(to, ShmWire.FLUSHED, 16, (b, at) -> b.putLong(at + ShmWire.TOKEN, 6)));
            assertEquals(6L * LINE, to.ring.producerPosition(), "six answers, a line each");
            assertEquals(List.of("ACK 1 100", "ACK 2 200", "ACK 3 300", "ACK 4 400", "ACK 5 500", "FLUSHED 6"),
                    readAll(to));
            assertEquals(List.of(), dropped);
        });
    }

    @Test
    void answersThatWaitedInTheBacklogTakeWholeLinesToo() throws Exception {
        withInbox(to -> {
            ShmReplies replies = new ShmReplies(1 << 20, d -> { });
            int fit = (64 << 10) / LINE;
            for (long token = 1; token <= fit + 3; token++) {
                assertTrue(replies.reply(to, ShmWire.ACK, 24, ack(token)));
            }
            assertEquals(3, to.backlog.size(), "the ring took " + fit + ", three wait");
            assertEquals(3L * 24, to.backlogBytes, "held as their content, padded as they go into the ring");
            assertEquals(fit, readAll(to).size());
            assertEquals(3, replies.drain(to));
            assertEquals(List.of("ACK " + (fit + 1) + " " + (fit + 1) * 100, "ACK " + (fit + 2) + " "
                    + (fit + 2) * 100, "ACK " + (fit + 3) + " " + (fit + 3) * 100), readAll(to));
            assertEquals(0, to.backlogBytes);
            assertEquals((fit + 3L) * LINE, to.ring.producerPosition(), "a line each, the held ones too");
        });
    }

    /** Runs {@code test} on a fresh inbox of 64 KiB in a directory of its own, both gone after. */
    private static void withInbox(java.util.function.Consumer<Inbox> test) throws Exception {
        Path dir = Files.createTempDirectory("fenceline-reply-lines");
        try {
            Inbox to = Inbox.create(dir.resolve(Segments.processPrefix() + "control"), 64 << 10, 1, 3, UUID.randomUUID(), true);
            try {
                test.accept(to);
            } finally {
                to.unmap();
            }
        } finally {
            delete(dir);
        }
    }

    private static ShmReplies.Writer ack(long token) {
        return (b, at) -> {
            b.putLong(at + ShmWire.CONN, 7);
            b.putLong(at + ShmWire.TOKEN, token);
            b.putLong(at + ShmWire.REPLY_VALUE, token * 100);
        };
    }

    /** Reads every answer in the ring, checking that each starts a line. */
    private static List<String> readAll(Inbox from) {
        List<String> read = new ArrayList<>();
        InboxFraming framing = new InboxFraming(from.ring, from.ring.consumerPosition());
        int n;
        do {
            n = framing.read((type, b, at, length) -> {
                assertEquals(0, (b.addressOffset() + at - RecordDescriptor.HEADER_LENGTH) % LINE, "starts a line");
                read.add(ShmWire.name(type) + " " + b.getLong(at + ShmWire.TOKEN)
                        + (type == ShmWire.ACK ? " " + b.getLong(at + ShmWire.REPLY_VALUE) : ""));
            }, Integer.MAX_VALUE);
        } while (n > 0);
        return read;
    }

    private static void delete(Path dir) throws java.io.IOException {
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.deleteIfExists(p);
            }
        }
        Files.deleteIfExists(dir);
    }
}
