package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * A message in parts holds the room its bytes take, not what it claims; messages not whole
 * {@code assembly-timeout} after their first part give their room to a message that needs it, and no
 * sooner; on virtual time.
 */
class UcxAssembliesTest {
    private static final long TIMEOUT = 10_000_000_000L;
    private static final int MAX_MESSAGE = 8 << 20;
    private static final int PART = 60_000;

    private long now = 1_000_000_000_000L;
    private final List<String> dropped = new ArrayList<>();
    private final UcxAssemblies assemblies = new UcxAssemblies("b", MAX_MESSAGE, TIMEOUT, () -> now, dropped::add);
    private final UnsafeBuffer request = new UnsafeBuffer(ByteBuffer.allocateDirect(UcxWire.REQUEST_HEADER + PART));

    private static UcxPeer peer() {
        return new UcxPeer(UUID.randomUUID(), new UcxAddress("h", 1, 1, List.of(), null));
    }

    /** A part of a message of {@code total} bytes on {@code conn}, its bytes at {@code offset} (byte i = i). */
    private void part(long conn, UcxPeer peer, int total, int offset) {
        int n = Math.min(PART, total - offset);
        request.putInt(UcxWire.LENGTH, total);
        request.putLong(UcxWire.ADDRESS, offset);
        for (int i = 0; i < n; i++) {
            request.putByte(UcxWire.REQUEST_HEADER + i, (byte) (offset + i));
        }
        assemblies.part(conn, peer, conn, request, 0, UcxWire.REQUEST_HEADER + n);
    }

    /** The end of the message on {@code conn}: its last {@code n} bytes at {@code offset}. */
    private byte[] end(long conn, int offset, int n) {
        request.putLong(UcxWire.ADDRESS, offset);
        for (int i = 0; i < n; i++) {
            request.putByte(UcxWire.REQUEST_HEADER + i, (byte) (offset + i));
        }
        return assemblies.assembled(conn, conn, request, 0, UcxWire.REQUEST_HEADER + n);
    }

    /** A part of {@code n} bytes at {@code offset} of a message of {@code total} bytes, under its own token. */
    private void part(long conn, long token, int total, int offset, int n) {
        request.putInt(UcxWire.LENGTH, total);
        request.putLong(UcxWire.ADDRESS, offset);
        for (int i = 0; i < n; i++) {
            request.putByte(UcxWire.REQUEST_HEADER + i, (byte) (offset + i));
        }
        assemblies.part(conn, sender, token, request, 0, UcxWire.REQUEST_HEADER + n);
    }

    private final UcxPeer sender = peer();

    @Test
    void firstPartsThatClaimALargeMessageAllocateForTheBytesTheyBring() {
        // A peer starts message after message with 100 bytes each claiming 8 MiB, each abandoned for
        // the next: what is allocated follows what it sent, not what it claimed
        for (long token = 1; token <= 1_000; token++) {
            part(7, token, MAX_MESSAGE, 0, 100);
            assertTrue(assemblies.allocated(7) <= 16 * 100, assemblies.allocated(7) + " bytes for 100");
        }
        assertEquals(assemblies.allocated(7), assemblies.held(), "the room held is what was allocated, not the claim");
        assemblies.drop(7);
        assertEquals(0, assemblies.held(), "and given back with the connection");
        // An honest message in parts small beside it grows to exactly its size, doubling first, every
        // byte in place
        int total = 1 << 20;
        int small = 4096;
        int offset = 0;
        for (; offset + small < total; offset += small) {
            part(8, 8, total, offset, small); // the token end() names
            long sent = offset + small;
            assertTrue(assemblies.allocated(8) <= Math.min(16 * sent, total), assemblies.allocated(8) + " for " + sent);
        }
        byte[] whole = end(8, offset, total - offset);
        assertEquals(total, whole.length);
        for (int i = 0; i < total; i++) {
            if (whole[i] != (byte) i) {
                assertEquals((byte) i, whole[i], "byte " + i);
            }
        }
    }

    /** Parts enough of a message of a peer's whole share that its array takes the whole message. */
    private static final int FILLING_PARTS = MAX_MESSAGE / 16 / PART + 1;

    /** Fills the room: eight peers, each a sixteenth of a message of a peer's whole share, now. */
    private UcxPeer[] fill() {
        UcxPeer[] peers = new UcxPeer[8];
        for (int i = 0; i < peers.length; i++) {
            peers[i] = peer();
            for (int p = 0; p < FILLING_PARTS; p++) {
                part(i + 1, peers[i], MAX_MESSAGE, p * PART);
            }
        }
        assertEquals(UcxAssemblies.MAX_ASSEMBLING, assemblies.held(), "eight shares fill the room");
        return peers;
    }

    /**
     * Peers that start message after message claiming a whole share each, with a first part of a few
     * bytes, hold only what those bytes take: claims kept no one's message out.
     */
    @Test
    void claimsStartedAgainAndAgainHoldNoRoomTheirBytesDoNotTake() {
        UcxPeer[] claimants = new UcxPeer[8];
        for (int i = 0; i < claimants.length; i++) {
            claimants[i] = peer();
        }
        for (int round = 1; round <= 50; round++) {
            now += TIMEOUT / 10; // each claim younger than the timeout when the next comes
            for (int i = 0; i < claimants.length; i++) {
                request.putInt(UcxWire.LENGTH, MAX_MESSAGE);
                request.putLong(UcxWire.ADDRESS, 0);
                assemblies.part(i + 1, claimants[i], round, request, 0, UcxWire.REQUEST_HEADER + 100);
            }
        }
        assertEquals(8 * 100, assemblies.held(), "8 claims of 100 bytes each hold their 100 bytes");
        int offset = 0; // an honest peer's message of 1 MiB, whole
        UcxPeer honest = peer();
        for (; (1 << 20) - offset > PART; offset += PART) {
            part(200, honest, 1 << 20, offset);
        }
        byte[] whole = end(200, offset, (1 << 20) - offset);
        assertEquals(1 << 20, whole.length);
        assertEquals((byte) 777, whole[777]);
    }

    @Test
    void theRoomOfMessagesNotWholeInTimeGoesToOneThatNeedsIt() {
        UcxPeer[] late = fill();
        part(100, peer(), 1 << 20, 0); // no room, and none late yet
        FencelineException full = assertThrows(FencelineException.class, () -> end(100, PART, 10));
        assertTrue(full.getMessage().contains("would pass the bound of " + UcxAssemblies.MAX_ASSEMBLING), full.getMessage());

        now += TIMEOUT / 2;
        part(1, late[0], MAX_MESSAGE, FILLING_PARTS * PART); // a part now and then does not keep a message on time
        now += TIMEOUT / 2 + 1;
        part(101, peer(), 1 << 20, 0);
        assertEquals(PART, assemblies.held(), "the eight late messages gave their room back");
        for (UcxPeer p : late) {
            assertEquals(0, p.assembling, "its share is free again");
        }

        FencelineException refused = assertThrows(FencelineException.class, () -> end(2, PART, 10));
        assertTrue(refused.getMessage().contains("was not whole 10000 ms after its first part") && refused.getMessage()
                .contains("assembly-timeout = 10000 ms"), refused.getMessage());
        part(1, late[0], MAX_MESSAGE, (FILLING_PARTS + 1) * PART); // a late message's next part takes no room
        assertEquals(PART, assemblies.held());
        assertThrows(FencelineException.class, () -> end(1, (FILLING_PARTS + 2) * PART, 10));

        int offset = 0; // a peer whose message was late sends a new one, whole
        for (; 200_000 - offset > PART; offset += PART) {
            part(201, late[1], 200_000, offset);
        }
        byte[] whole = end(201, offset, 200_000 - offset);
        for (int i = 0; i < whole.length; i += 997) {
            assertEquals((byte) i, whole[i], "byte " + i);
        }
        for (long conn = 3; conn <= 8; conn++) {
            assemblies.drop(conn);
        }
        assemblies.drop(101);
        assertEquals(0, assemblies.held(), "nothing held, nothing given back twice");
        assertEquals(0, late[1].assembling);
        assertTrue(dropped.isEmpty(), dropped.toString());
    }

    /**
     * A message whose array is not yet whole when its end comes (its end brings most of it) is given
     * whole, and holds nothing once given.
     */
    @Test
    void anEndThatBringsMostOfTheMessageGetsItWhole() {
        UcxPeer p = peer();
        part(400, 400, 10_000, 0, 100);
        assertEquals(100, assemblies.allocated(400));
        byte[] whole = end(400, 100, 9_900);
        assertEquals(10_000, whole.length);
        for (int i = 0; i < whole.length; i += 97) {
            assertEquals((byte) i, whole[i], "byte " + i);
        }
        assertEquals(0, assemblies.held());
        assertEquals(0, p.assembling);
    }

    /**
     * A message that is late itself when it needs more room (the room full) is refused as late, and
     * gives back what it held.
     */
    @Test
    void aLateMessageThatNeedsRoomWhenItIsFullIsRefusedAsLate() {
        UcxPeer slow = peer();
        part(500, slow, MAX_MESSAGE, 0);
        long left = UcxAssemblies.MAX_ASSEMBLING - PART; // the rest of the room, in other peers' messages
        for (int conn = 1; left > 0; conn++) {
            int total = (int) Math.min(MAX_MESSAGE, left);
            UcxPeer other = peer();
            for (int p = 0; p < FILLING_PARTS; p++) {
                part(conn, other, total, p * PART);
            }
            left -= total;
        }
        assertEquals(UcxAssemblies.MAX_ASSEMBLING, assemblies.held(), "the room full");
        now += TIMEOUT + 1; // every message late, and the slow one's next part must grow its array
        part(500, slow, MAX_MESSAGE, PART);
        assertEquals(0, slow.assembling, "refused, its room given back");
        FencelineException late = assertThrows(FencelineException.class, () -> end(500, 2 * PART, 10));
        assertTrue(late.getMessage().contains("was not whole"), late.getMessage());
        assertEquals(0, assemblies.held(), "the others' late messages went in the same look");
    }

    /** A first part refused whatever the room (bad offset, too large) looks nothing over. */
    @Test
    void requestsRefusedForOtherReasonsLookNothingOver() {
        fill();
        now += TIMEOUT + 1;
        part(300, peer(), MAX_MESSAGE + 1, 0);
        part(301, peer(), 1 << 20, PART);
        assertEquals(UcxAssemblies.MAX_ASSEMBLING, assemblies.held(), "nothing was looked over");
        part(302, peer(), 1 << 20, 0);
        assertEquals(PART, assemblies.held(), "the first message that needs room gets it");
        assertTrue(assertThrows(FencelineException.class, () -> end(300, PART, 10)).getMessage()
                .contains("exceeds this worker's limit"));
    }

    @Test
    void theAssembliesAreLookedOverAtMostOnceAQuarterTimeout() {
        fill();
        now += TIMEOUT - 1_000_000;
        part(100, peer(), 1 << 20, 0); // looked over: none late yet
        assertEquals(UcxAssemblies.MAX_ASSEMBLING, assemblies.held());
        now += 2_000_000;
        part(101, peer(), 1 << 20, 0); // late ones now, but looked over 2 ms ago
        assertEquals(UcxAssemblies.MAX_ASSEMBLING, assemblies.held());
        now += TIMEOUT / 4;
        part(102, peer(), 1 << 20, 0);
        assertEquals(PART, assemblies.held(), "a quarter timeout on, the late ones went");
        FencelineException full = assertThrows(FencelineException.class, () -> end(101, PART, 10));
        assertTrue(full.getMessage().contains("would pass the bound"), full.getMessage());
    }
}
