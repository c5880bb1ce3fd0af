package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The wireup messages: each round-trips, and every malformed form is refused by name. */
class UcxWireupTest {
    static UcxWireup.Connect connect() {
        return new UcxWireup.Connect(77, new UUID(1, 2), new byte[] {9, 8, 7},
                List.of(new UcxWireup.Channel(11, 0, 1, UcxWireup.Mode.IFACE, new byte[0]),
                        new UcxWireup.Channel(12, 2, 0, UcxWireup.Mode.ENDPOINT, new byte[] {5, 5, 5, 5}),
                        new UcxWireup.Channel(13, 1, 1, UcxWireup.Mode.EXISTING, new byte[0]),
                        new UcxWireup.Channel(14, 0, 0, UcxWireup.Mode.REVERSE, new byte[0])),
                List.of(new UcxWireup.Lane(-1L, 0), new UcxWireup.Lane(42L, 2)));
    }

    static List<UcxWireup.Message> samples() {
        return List.of(connect(), new UcxWireup.Connected(77, List.of(new UcxWireup.End(12, new byte[] {6, 6}),
                new UcxWireup.End(11, new byte[0])), List.of(65_000, 0, 1 << 20)), new UcxWireup.Refused(77, false, "no room: ünïcode"), new UcxWireup.Refused(78, true, "not mine"),
                new UcxWireup.Hello(12), new UcxWireup.HelloAck(12), new UcxWireup.Bye(42),
                new UcxWireup.Leaving(new UUID(3, 4), 12));
    }

    private static UcxWireup.Message decode(byte[] b) {
        return UcxWireup.decode(ByteBuffer.wrap(b));
    }

    @Test
    void everyMessageRoundTrips() {
        for (UcxWireup.Message m : samples()) {
            byte[] bytes = UcxWireup.encode(m);
            UcxWireup.Message back = decode(bytes);
            assertArrayEquals(bytes, UcxWireup.encode(back), m.toString());
            assertEquals(m.getClass(), back.getClass());
        }
        UcxWireup.Connect c = (UcxWireup.Connect) decode(UcxWireup.encode(connect()));
        assertEquals(new UUID(1, 2), c.worker());
        assertEquals(UcxWireup.Mode.ENDPOINT, c.channels().get(1).mode());
        assertArrayEquals(new byte[] {5, 5, 5, 5}, c.channels().get(1).endpoint());
        assertEquals(UcxWireup.Mode.REVERSE, c.channels().get(3).mode());
        assertEquals(42L, c.lanes().get(1).conn());
        UcxWireup.Connected done = (UcxWireup.Connected) decode(UcxWireup.encode(samples().get(1)));
        assertEquals(List.of(65_000, 0, 1 << 20), done.maxGets());
        UcxWireup.Refused r = (UcxWireup.Refused) decode(UcxWireup.encode(new UcxWireup.Refused(78, true, "x")));
        assertTrue(r.notOwnChannel() && r.dial() == 78 && r.reason().equals("x"), r.toString());
        UcxWireup.Leaving l = (UcxWireup.Leaving) decode(UcxWireup.encode(new UcxWireup.Leaving(new UUID(3, 4), 12)));
        assertEquals(new UUID(3, 4), l.worker());
        assertEquals(12L, l.channel());
    }

    @Test
    void everyTruncationAndATrailingByteAreRefused() {
        for (UcxWireup.Message m : samples()) {
            byte[] good = UcxWireup.encode(m);
            for (int n = 0; n < good.length; n++) {
                byte[] cut = Arrays.copyOf(good, n);
                assertThrows(FencelineException.class, () -> decode(cut), m + " cut to " + n + " bytes");
            }
            FencelineException trailing = assertThrows(FencelineException.class,
                    () -> decode(Arrays.copyOf(good, good.length + 1)));
            assertTrue(trailing.getMessage().contains("after its end"), trailing.getMessage());
        }
    }

    @Test
    void fieldsOutsideTheirBoundsAreRefused() {
        byte[] good = UcxWireup.encode(connect());
        byte[] type = good.clone();
        type[0] = 99;
        assertTrue(assertThrows(FencelineException.class, () -> decode(type)).getMessage().contains("unknown type 99"));
        byte[] version = good.clone();
        version[1] = UcxWireup.VERSION + 1;
        assertTrue(assertThrows(FencelineException.class, () -> decode(version)).getMessage()
                .contains("version " + (UcxWireup.VERSION + 1)));
        int channels = 2 + 8 + 16 + 2 + 3;
        byte[] none = good.clone();
        none[channels] = 0;
        assertTrue(assertThrows(FencelineException.class, () -> decode(none)).getMessage().contains("0 channels"));
        byte[] mode = good.clone();
        mode[channels + 1 + 8 + 2] = 4;
        assertTrue(assertThrows(FencelineException.class, () -> decode(mode)).getMessage().contains("unknown mode 4"));
        byte[] iface = good.clone();
        iface[channels + 1 + 8] = (byte) 200;
        assertTrue(assertThrows(FencelineException.class, () -> decode(iface)).getMessage().contains("malformed"));
        byte[] lanes = good.clone();
        lanes[good.length - 2 * 9 - 1] = 65;
        assertTrue(assertThrows(FencelineException.class, () -> decode(lanes)).getMessage().contains("65 lanes"));
        byte[] laneChannel = good.clone();
        laneChannel[good.length - 1] = 4;
        assertTrue(assertThrows(FencelineException.class, () -> decode(laneChannel)).getMessage()
                .contains("lane on channel 4"));
        byte[] flag = UcxWireup.encode(new UcxWireup.Refused(78, true, "x"));
        flag[1 + 8] = 2;
        assertTrue(assertThrows(FencelineException.class, () -> decode(flag)).getMessage().contains("flag is 2"));
        byte[] endpoint = ByteBuffer.allocate(12).put((byte) 2).putLong(1).put((byte) 1).putShort((short) 0)
                .array(); // a CONNECTED whose one end is cut short
        assertThrows(FencelineException.class, () -> decode(endpoint));
        byte[] connected = UcxWireup.encode(samples().get(1));
        byte[] manyGets = connected.clone();
        manyGets[connected.length - 3 * 4 - 1] = 65;
        assertTrue(assertThrows(FencelineException.class, () -> decode(manyGets)).getMessage()
                .contains("get bounds for 65 lanes"));
        byte[] negative = connected.clone();
        ByteBuffer.wrap(negative).order(ByteOrder.nativeOrder()).putInt(connected.length - 4, -1);
        assertTrue(assertThrows(FencelineException.class, () -> decode(negative)).getMessage()
                .contains("lane 2 takes gets of at most -1 bytes"));
    }
}
