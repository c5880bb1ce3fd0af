package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import org.junit.jupiter.api.Test;

/** A worker address's shm part: what it carries comes back, and another release's is named as such. */
class ShmAddressTest {
    private static final ShmAddress SAMPLE = new ShmAddress("boot-1 pidns-2", 4242, 99,
            "fl-1-4242-99-0badcafe-0123456789abcdef-ctl");

    @Test
    void anAddressComesBackAsEncoded() {
        assertTrue(Segments.isControlName(SAMPLE.control()), "the sample names a control segment");
        assertEquals(SAMPLE, ShmAddress.decode(SAMPLE.encode()));
    }

    @Test
    void anAddressOfAnotherVersionIsRefusedWithBothVersionsNamed() {
        byte[] other = SAMPLE.encode();
        other[0]++;
        FencelineException e = assertThrows(FencelineException.class, () -> ShmAddress.decode(other));
        assertTrue(e.getMessage().contains("version " + other[0] + ", this worker reads " + (other[0] - 1)),
                e.getMessage());
    }
}
