package dev.fenceline.transport.ucx;

import java.util.Map;

/**
 * The child process of {@link PathNamedPosixTest}: opens UCT's posix in the configuration its UCX_*
 * environment gives, and prints {@code OPENED} or {@code REFUSED <why>}.
 */
public final class PathNamedPosixMain {
    private PathNamedPosixMain() {
    }

    public static void main(String[] args) {
        UctResource r = UcxNative.resources().stream()
                .filter(x -> x.transport().equals("posix") && x.device().equals("memory")).findFirst().orElseThrow();
        try (UctWorker w = UctWorker.create()) {
            try (UctIface iface = w.open(r, Map.of())) {
                System.out.println("OPENED " + iface);
            } catch (UctException e) {
                System.out.println("REFUSED " + e.getMessage());
            }
        }
    }
}
