package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.DirectPosting;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The calling thread's posting under a grant keeps the reads-before-a-fence rule (docs/fences.md):
 * while a get it posted is unanswered, nothing of a later epoch but another get is posted behind
 * it on the lane; the caller submits it instead, and the actor's barrier holds it until the answer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FastPathPostingTest {
    private final ComponentFixture f = new ComponentFixture();
    private final FastPath fast = new FastPath(f.channel, Runnable::run);
    private final Lane lane = new Lane();

    /**
     * A posting lane that numbers and keeps what it is given, and answers only when told; told to
     * break, it numbers the next one, keeps it, and throws (as a frame that failed to be written).
     */
    private static final class Lane implements DirectPosting {
        final List<PostedOperation> posted = new ArrayList<>();
        boolean breakNext;

        @Override
        public boolean postNow(PostedOperation op) {
            if (op.sequence() < 0) {
                return false;
            }
            posted.add(op);
            if (breakNext) {
                breakNext = false;
                throw new IllegalStateException("the frame could not be written");
            }
            return true;
        }
    }

    private GrantSlot.Grant grant() {
        f.channel.grant().publish(null, lane, 0, false);
        GrantSlot.Grant g = fast.postingGrant();
        assertNotNull(g, "an idle endpoint with a posting lane is granted");
        return g;
    }

    private boolean rma(GrantSlot.Grant g, Request.Kind kind, long epoch) {
        Request r = Request.rma(kind, epoch, ByteBuffer.allocate(8), f.key.baseAddress(), f.key);
        return fast.post(g, r, TransportOp.rma(kind == Request.Kind.GET ? TransportOp.Kind.GET : TransportOp.Kind.PUT,
                fast.postedToken(), f.key.baseAddress(), f.key, r.local));
    }

    private boolean atomic(GrantSlot.Grant g, long epoch) {
        Request r = Request.atomic(Request.Kind.ATOMIC_POST, epoch, f.key.baseAddress(), f.key, AtomicOp.ADD, 8, 1, 0);
        return fast.post(g, r, TransportOp.atomic(TransportOp.Kind.ATOMIC_POST, fast.postedToken(), f.key.baseAddress(),
                f.key, AtomicOp.ADD, 8, 1, 0));
    }

    @Test
    void aWriteFencedAfterAnUnansweredPostedGetIsNotPostedBehindIt() {
        GrantSlot.Grant g = grant();
        assertTrue(rma(g, Request.Kind.GET, 5), "the get is posted");
        assertTrue(rma(g, Request.Kind.PUT, 5), "same epoch: no fence between them");
        assertFalse(rma(g, Request.Kind.PUT, 6), "get; fence(); put: the put waits for the get's answer");
        assertFalse(atomic(g, 6), "an atomic too");
        assertTrue(rma(g, Request.Kind.GET, 6), "a read cannot disturb a read: it goes");
        assertEquals(3, lane.posted.size(), "the refused ones reached no lane");

        lane.posted.get(0).completed(0); // the epoch-5 get answered; the epoch-6 one is open
        assertTrue(rma(g, Request.Kind.PUT, 6), "after the answer the fenced put goes");
        assertFalse(rma(g, Request.Kind.PUT, 7), "the epoch-6 get is still open");
        lane.posted.get(2).failed(new FencelineException("refused at the target"));
        assertTrue(atomic(g, 7), "a failed get is answered too");
        assertEquals(5, lane.posted.size());
    }

    @Test
    void aWriteFencedAfterAGetFromItsOwnCallbackIsPosted() {
        GrantSlot.Grant g = grant();
        Request get = Request.rma(Request.Kind.GET, 1, ByteBuffer.allocate(8), f.key.baseAddress(), f.key);
        assertTrue(fast.post(g, get, TransportOp.rma(TransportOp.Kind.GET, fast.postedToken(), f.key.baseAddress(),
                f.key, get.local)));
        List<Boolean> fromCallback = new ArrayList<>();
        get.future().thenRun(() -> fromCallback.add(rma(g, Request.Kind.PUT, 2)));
        lane.posted.get(0).completed(0);
        assertEquals(List.of(true), fromCallback, "the get is closed before its callbacks run");
    }

    @Test
    void aGetALaneNumberedThenThrewOnIsClosedOnceEvenIfGivenBackLater() {
        GrantSlot.Grant g = grant();
        assertTrue(rma(g, Request.Kind.GET, 5), "the first get of epoch 5 stays open");
        lane.breakNext = true;
        assertThrows(IllegalStateException.class, () -> rma(g, Request.Kind.GET, 5));
        lane.posted.get(1).returned(); // the lane gives back what it numbered: no second close
        assertFalse(rma(g, Request.Kind.PUT, 6), "the first get of epoch 5 is still unanswered");
        lane.posted.get(0).completed(0);
        assertTrue(rma(g, Request.Kind.PUT, 6));
    }

    @Test
    void aGetGivenBackOrNotTakenIsNoLongerOpen() {
        GrantSlot.Grant g = grant();
        assertTrue(rma(g, Request.Kind.GET, 1));
        lane.posted.get(0).returned(); // its lane ended: the actor takes it back, behind its barrier
        assertTrue(rma(g, Request.Kind.PUT, 2));

        f.channel.grant().revoke(); // the lane refuses what it is given under an ended grant
        assertFalse(rma(g, Request.Kind.GET, 3), "not taken: the grant ended");
        f.channel.grant().publish(null, lane, 0, false);
        assertTrue(rma(fast.postingGrant(), Request.Kind.PUT, 4), "the get never sent is not open");
    }
}
