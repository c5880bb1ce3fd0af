package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.zip.CRC32;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The target process of {@link UctTwoProcessTest}: opens one iface of the transport named, exposes
 * a region (allocated by the memory domain, or registered), prints
 * {@code READY <iface address> <packed key> <base address>}, then progresses its worker and answers
 * commands on standard input: {@code CRC <length>} (the region's first bytes, as this process sees
 * them) and {@code MESSAGES} (how many active messages arrived, and the sum of their bytes).
 */
public final class UctPeer {
    static final int REGION = 1 << 20;

    private UctPeer() {
    }

    /** @param args the transport (posix, sysv, cma, tcp) and the device */
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        UctResource r = UcxNative.resources().stream()
                .filter(x -> x.transport().equals(args[0]) && x.device().equals(args[1])).findFirst().orElseThrow();
        try (UctWorker w = UctWorker.create()) {
            UctIface iface = w.open(r, Map.of());
            UctMemory region;
            ByteBuffer registered = null;
            if (iface.attributes().has(UctIfaceAttributes.MD_ALLOC)) {
                region = iface.allocate(REGION, EnumSet.allOf(Access.class));
            } else {
                registered = ByteBuffer.allocateDirect(REGION);
                region = iface.register(BufferUtil.address(registered), REGION, EnumSet.allOf(Access.class));
            }
            UnsafeBuffer memory = new UnsafeBuffer(region.address(), REGION);
            memory.setMemory(0, REGION, (byte) 0);
            System.out.println("READY " + hex.formatHex(iface.address()) + " " + hex.formatHex(region.pack()) + " "
                    + region.address());
            System.out.flush();
            long[] messages = {0, 0};
            UctEventHandler handler = new UctEventHandler() {
                @Override
                public void completed(long token, int status, long value) {
                }

                @Override
                public void activeMessage(long ifaceHandle, int id, DirectBuffer data, int offset, int length) {
                    messages[0]++;
                    for (int i = 0; i < length; i++) {
                        messages[1] += data.getByte(offset + i) & 0xff;
                    }
                }

                @Override
                public void ready(long token) {
                }

                @Override
                public void endpointFailed(long endpoint, int status) {
                }
            };
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (true) {
                w.progress();
                w.drain(handler);
                if (!in.ready()) {
                    continue;
                }
                String line = in.readLine();
                if (line == null || line.equals("EXIT")) {
                    break;
                }
                String[] c = line.split(" ");
                if (c[0].equals("CRC")) {
                    byte[] b = new byte[Integer.parseInt(c[1])];
                    memory.getBytes(0, b);
                    CRC32 crc = new CRC32();
                    crc.update(b);
                    System.out.println("CRC " + crc.getValue());
                } else if (c[0].equals("MESSAGES")) {
                    System.out.println("MESSAGES " + messages[0] + " " + messages[1]);
                }
                System.out.flush();
            }
        }
    }
}
