package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import java.io.NotSerializableException;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** The serializer as Pekko finds it through the module's bindings, and against hostile bytes. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencelineSerializerTest {
    private ActorSystem<Void> system;
    private Serialization serialization;
    private ActorRef<Object> ref;

    @BeforeAll
    void start() {
        system = ActorSystem.create(Behaviors.empty(), "serializer-test", ConfigFactory.load());
        serialization = SerializationExtension.get(Adapter.toClassic(system));
        ref = Adapter.toTyped(Adapter.toClassic(system).deadLetters());
    }

    @AfterAll
    void stop() throws Exception {
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private Object roundTrip(Object o) throws NotSerializableException {
        org.apache.pekko.serialization.Serializer s = serialization.findSerializerFor(o);
        assertEquals(FencelineSerializer.IDENTIFIER, s.identifier(), "bound to " + o.getClass());
        byte[] bytes = serialization.serialize(o).get();
        return serialization.deserialize(bytes, s.identifier(), Serializers.manifestFor(s, o)).get();
    }

    private static WorkerAddress address() {
        return new WorkerAddress(UUID.randomUUID(), "kv", Map.of("tcp", new byte[] {1, 2, 3}, "shm", new byte[0]));
    }

    private static RemoteKey key() {
        return new RemoteKey(UUID.randomUUID(), 17, 0x7f00_0000_1000L, 4096, java.util.Map.of("shm", new byte[] {9, 8, 7}));
    }

    @Test
    void everyBoundTypeRoundTrips() throws Exception {
        WorkerAddress a = address();
        RemoteKey k = key();
        assertEquals(a, roundTrip(a));
        assertEquals(k, roundTrip(k));
        Advertiser.Description d = (Advertiser.Description) roundTrip(new Advertiser.Description(-5, a));
        assertEquals(-5, d.incarnation());
        assertEquals(a, d.address());
        Advertiser.RegionAnswer r = (Advertiser.RegionAnswer) roundTrip(new Advertiser.RegionAnswer("table", k));
        assertEquals("table", r.region());
        assertEquals(k, r.key());
        assertNull(((Advertiser.RegionAnswer) roundTrip(new Advertiser.RegionAnswer("none", null))).key());
        Advertiser.Lookup l = (Advertiser.Lookup) roundTrip(new Advertiser.Lookup("table", ref.narrow()));
        assertEquals("table", l.region());
        assertEquals(ref.path(), l.replyTo().path());
        assertEquals(ref.path(), ((Advertiser.Describe) roundTrip(new Advertiser.Describe(ref.narrow()))).replyTo().path());
    }

    /** Truncated, extended and bit-flipped forms: refused with a message, or decoded to a value; never anything else. */
    @Test
    void hostileBytesAreRefusedCleanly() throws Exception {
        FencelineSerializer s = (FencelineSerializer) serialization.serializerOf(FencelineSerializer.class.getName()).get();
        long seed = 0x5EEDL;
        System.out.println("FencelineSerializerTest seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        Object[] samples = {address(), key(), new Advertiser.Description(3, address()),
            new Advertiser.RegionAnswer("t", key()), new Advertiser.Lookup("t", ref.narrow())};
        int refused = 0;
        for (Object o : samples) {
            byte[] good = s.toBinary(o);
            String manifest = s.manifest(o);
            for (int cut = 0; cut < good.length; cut++) {
                byte[] shorter = Arrays.copyOf(good, cut);
                assertThrows(NotSerializableException.class, () -> s.fromBinary(shorter, manifest),
                        manifest + " cut to " + cut + " of " + good.length + " bytes");
                refused++;
            }
            byte[] longer = Arrays.copyOf(good, good.length + 1);
            if (!(o instanceof WorkerAddress) && !(o instanceof RemoteKey)) {
                assertThrows(NotSerializableException.class, () -> s.fromBinary(longer, manifest), "a byte too many");
            }
            for (int i = 0; i < 2000; i++) {
                byte[] flipped = good.clone();
                flipped[random.nextInt(flipped.length)] ^= (byte) (1 << random.nextInt(8));
                try {
                    s.fromBinary(flipped, manifest);
                } catch (NotSerializableException e) {
                    assertTrue(e.getMessage().startsWith("FencelineSerializer"), e.getMessage());
                    refused++;
                }
            }
        }
        NotSerializableException unknown = assertThrows(NotSerializableException.class,
                () -> s.fromBinary(new byte[4], "Z"));
        assertTrue(unknown.getMessage().contains("unknown manifest 'Z'"), unknown.getMessage());
        assertTrue(refused > 100, "refused " + refused);
        byte[] huge = new byte[12];
        java.nio.ByteBuffer.wrap(huge).putLong(1).putInt(Integer.MAX_VALUE);
        NotSerializableException big = assertThrows(NotSerializableException.class, () -> s.fromBinary(huge, "d"));
        assertTrue(big.getMessage().contains("2147483647"), "names the length: " + big.getMessage());
    }

    /**
     * A peer's region name is held to the bound a local one is: a Lookup of 65,535 zero bytes (each
     * read as a character, and written back as two) would otherwise come back as an answer too long
     * to write.
     */
    @Test
    void aRegionNameOutsideItsBoundIsRefused() throws Exception {
        FencelineSerializer s = (FencelineSerializer) serialization.serializerOf(FencelineSerializer.class.getName()).get();
        byte[] lookup = s.toBinary(new Advertiser.Lookup("t", ref.narrow()));
        java.io.ByteArrayOutputStream hostile = new java.io.ByteArrayOutputStream();
        hostile.write(0xff);
        hostile.write(0xff); // readUTF's length: 65,535 bytes, all zero
        hostile.write(new byte[65535]);
        hostile.write(lookup, 3, lookup.length - 3); // the reply-to of the good one ("t" took 3 bytes)
        NotSerializableException e = assertThrows(NotSerializableException.class,
                () -> s.fromBinary(hostile.toByteArray(), s.manifest(new Advertiser.Lookup("t", ref.narrow()))));
        assertTrue(e.getMessage().contains("a region name of 65535 characters (1 to 256)"), e.getMessage());

        byte[] empty = s.toBinary(new Advertiser.RegionAnswer("", null));
        assertThrows(NotSerializableException.class, () -> s.fromBinary(empty,
                s.manifest(new Advertiser.RegionAnswer("t", null))), "an empty name");
        assertEquals("x".repeat(256), ((Advertiser.RegionAnswer) roundTrip(new Advertiser.RegionAnswer("x".repeat(256),
                null))).region());
    }

    /** A worker name no peer could read is refused where the address is made. */
    @Test
    void aWorkerNameTooLongForAnAddressIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new WorkerAddress(UUID.randomUUID(), "\u00e9".repeat(513), Map.of()));
        assertTrue(e.getMessage().contains("at most 1024 UTF-8 bytes, not 1026"), e.getMessage());
        WorkerAddress longest = new WorkerAddress(UUID.randomUUID(), "n".repeat(1024), Map.of());
        assertEquals(longest, WorkerAddress.fromBytes(longest.toBytes()));
        byte[] bytes = longest.toBytes(); // its name's 1,024 bytes made invalid UTF-8: each read as U+FFFD (3 bytes)
        int at = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("nnnn");
        Arrays.fill(bytes, at, at + 1024, (byte) 0xff);
        assertThrows(dev.fenceline.FencelineException.class, () -> WorkerAddress.fromBytes(bytes),
                "refused as malformed, as the decoder's contract says");
    }
}
