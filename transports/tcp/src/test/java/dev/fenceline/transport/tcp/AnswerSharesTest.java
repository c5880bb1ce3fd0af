package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The share of {@code limits.queued-bytes-total} each connection may leave unread, and when the
 * connections are all told that it fell: at few steps (n connects cost O(n log n) tellings), and
 * often enough that no member was last told of a share above 4/3 of the one it has now.
 */
class AnswerSharesTest {
    private static final int MIB = 1 << 20;

    private static TcpSettings.Limits limits(int queuedBytes, long total) {
        return new TcpSettings.Limits(512, 4096, 1024, 1024, queuedBytes, total, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
    }

    @Test
    void theShareIsEvenAndBounded() {
        TcpSettings.Limits l = limits(32 * MIB, 1L << 30);
        assertEquals(32 * MIB, l.queueMark(0), "none yet: as for one");
        assertEquals(32 * MIB, l.queueMark(1), "at most queued-bytes");
        assertEquals(32 * MIB, l.queueMark(32));
        assertEquals((1 << 30) / 33, l.queueMark(33), "an even share past that");
        assertEquals((1 << 30) / 4096, l.queueMark(4096));
        assertEquals(64 << 10, l.queueMark(1 << 20), "at least 64 KiB");
        assertEquals(64 << 10, limits(32 * MIB, 64 << 10).queueMark(1), "a total under one share");
    }

    /** A member that notes the share as it was when it was last told. */
    private static final class Member implements AnswerShares.Member {
        private final AnswerShares shares;
        int toldShare;
        int tellings;

        Member(AnswerShares shares) {
            this.shares = shares;
            this.toldShare = Integer.MAX_VALUE;
        }

        @Override
        public void shareFell() {
            tellings++;
            toldShare = shares.share(shares.count());
        }
    }

    @Test
    void membersAreToldAtFewStepsAndNeverHoldMoreThanAThirdOverTheirShare() {
        AnswerShares shares = new AnswerShares(limits(32 * MIB, 1L << 30));
        List<Member> members = new ArrayList<>();
        long tellingsBefore = 0;
        int steps = 0;
        for (int n = 1; n <= 4096; n++) {
            Member m = new Member(shares);
            m.toldShare = shares.share(n); // it looks at its share at its first frame
            members.add(m);
            shares.joined(m);
            long tellings = members.stream().mapToLong(x -> x.tellings).sum();
            if (tellings > tellingsBefore) {
                steps++;
                tellingsBefore = tellings;
            }
            int now = shares.share(shares.count());
            for (Member x : members) {
                assertTrue(x.toldShare <= now + now / 3 + 1, "at " + n + " a member was last told of " + x.toldShare
                        + " with the share at " + now);
            }
        }
        assertEquals(4096, shares.count());
        assertTrue(steps <= 20, "told all at " + steps + " steps over 4,096 connects");
        // Connections leave: the share rises, and a later fall is measured from there.
        for (Member m : members.subList(0, 4000)) {
            shares.left(m);
        }
        assertEquals(96, shares.count());
        int tellingsThen = members.get(4095).tellings;
        for (int i = 0; i < 40; i++) { // 136 share 1 GiB: 7.5 MiB each, under 3/4 of 10.7 MiB
            shares.joined(new Member(shares));
        }
        assertTrue(members.get(4095).tellings > tellingsThen, "told of the fall from the risen share");
        shares.left(members.get(4095));
        shares.left(members.get(4095));
        assertEquals(135, shares.count(), "a member that left twice is counted off once");
    }
}
