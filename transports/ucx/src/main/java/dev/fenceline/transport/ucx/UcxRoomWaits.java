package dev.fenceline.transport.ucx;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The lanes whose endpoints wait for room on them: any thread says a lane wants room, the progress
 * agent asks each waiting lane once a pass whether it has room again.
 */
final class UcxRoomWaits {
    private final ManyToOneConcurrentArrayQueue<UcxLane> wanted = new ManyToOneConcurrentArrayQueue<>(64 << 10);
    /** The lanes taken from {@link #wanted} that have no room yet (agent thread only). */
    private final List<UcxLane> waiting = new ArrayList<>();

    /** A lane's endpoint waits for room (any thread). */
    void want(UcxLane lane) {
        wanted.offer(lane); // a full queue: the lane is asked again at the next answer anyway
    }

    /**
     * Asks each waiting lane whether it has room again (agent thread).
     *
     * @param hasRoom gets each lane that has, once; it waits no more
     */
    void serve(Consumer<UcxLane> hasRoom) {
        for (UcxLane l; (l = wanted.poll()) != null;) {
            if (!waiting.contains(l)) {
                waiting.add(l);
            }
        }
        for (int i = 0; i < waiting.size();) {
            UcxLane l = waiting.get(i);
            if (l.roomAgain()) {
                hasRoom.accept(l);
                waiting.remove(i);
            } else {
                i++;
            }
        }
    }
}
