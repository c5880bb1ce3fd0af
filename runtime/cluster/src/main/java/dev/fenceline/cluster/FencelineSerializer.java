package dev.fenceline.cluster;

import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * Serializes {@link WorkerAddress} and {@link RemoteKey} (their own byte forms), so a service can
 * put them in its own messages between members, and this module's messages between members.
 * Bound in the module's {@code reference.conf}. What arrives was written by another process:
 * every length is checked against what is there, and anything malformed is refused with a
 * {@link NotSerializableException} that says what was wrong (Pekko then drops the message).
 */
public final class FencelineSerializer extends SerializerWithStringManifest {
    /** This serializer's id among the actor system's serializers. */
    public static final int IDENTIFIER = 0x464C; // "FL"

    private static final String WORKER_ADDRESS = "A";
    private static final String REMOTE_KEY = "K";
    private static final String DESCRIBE = "D";
    private static final String DESCRIPTION = "d";
    private static final String LOOKUP = "L";
    private static final String REGION_ANSWER = "R";
    /** The longest byte form accepted inside a message (a worker address with many transports). */
    private static final int MAX_BLOB = 1 << 20;

    private final ExtendedActorSystem system;
    private volatile ActorRefResolver resolver;

    /** @param system the actor system (Pekko passes it) */
    public FencelineSerializer(ExtendedActorSystem system) {
        this.system = system;
    }

    @Override
    public int identifier() {
        return IDENTIFIER;
    }

    @Override
    public String manifest(Object o) {
        if (o instanceof WorkerAddress) {
            return WORKER_ADDRESS;
        } else if (o instanceof RemoteKey) {
            return REMOTE_KEY;
        } else if (o instanceof Advertiser.Describe) {
            return DESCRIBE;
        } else if (o instanceof Advertiser.Description) {
            return DESCRIPTION;
        } else if (o instanceof Advertiser.Lookup) {
            return LOOKUP;
        } else if (o instanceof Advertiser.RegionAnswer) {
            return REGION_ANSWER;
        }
        throw new IllegalArgumentException("FencelineSerializer cannot serialize " + o.getClass().getName());
    }

    @Override
    public byte[] toBinary(Object o) {
        if (o instanceof WorkerAddress a) {
            return a.toBytes();
        } else if (o instanceof RemoteKey k) {
            return k.toBytes();
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            if (o instanceof Advertiser.Describe d) {
                out.writeUTF(ref(d.replyTo()));
            } else if (o instanceof Advertiser.Description d) {
                out.writeLong(d.incarnation());
                blob(out, d.address().toBytes());
            } else if (o instanceof Advertiser.Lookup l) {
                out.writeUTF(l.region());
                out.writeUTF(ref(l.replyTo()));
            } else if (o instanceof Advertiser.RegionAnswer r) {
                out.writeUTF(r.region());
                out.writeBoolean(r.key() != null);
                if (r.key() != null) {
                    blob(out, r.key().toBytes());
                }
            } else {
                throw new IllegalArgumentException("FencelineSerializer cannot serialize " + o.getClass().getName());
            }
        } catch (IOException e) {
            throw new IllegalStateException("writing to memory failed", e); // a ByteArrayOutputStream does not
        }
        return bytes.toByteArray();
    }

    /** A peer's region name, held to the bound a local one is ({@link FencelineCluster#MAX_REGION_NAME}). */
    private static String regionName(String name) throws NotSerializableException {
        if (name.isEmpty() || name.length() > FencelineCluster.MAX_REGION_NAME) {
            throw new NotSerializableException("FencelineSerializer: a region name of " + name.length()
                    + " characters (1 to " + FencelineCluster.MAX_REGION_NAME + ")");
        }
        return name;
    }

    @Override
    public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
        try {
            switch (manifest) {
                case WORKER_ADDRESS:
                    return WorkerAddress.fromBytes(bytes);
                case REMOTE_KEY:
                    return RemoteKey.fromBytes(bytes);
                default:
                    break;
            }
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
            Object o = switch (manifest) {
                case DESCRIBE -> new Advertiser.Describe(resolve(in.readUTF()));
                case DESCRIPTION -> new Advertiser.Description(in.readLong(), WorkerAddress.fromBytes(blob(in)));
                case LOOKUP -> new Advertiser.Lookup(regionName(in.readUTF()), resolve(in.readUTF()));
                case REGION_ANSWER -> {
                    String region = regionName(in.readUTF());
                    yield new Advertiser.RegionAnswer(region, in.readBoolean() ? RemoteKey.fromBytes(blob(in)) : null);
                }
                default -> throw new NotSerializableException("FencelineSerializer: unknown manifest '" + manifest
                        + "' (" + bytes.length + " bytes)");
            };
            if (in.available() != 0) {
                throw new NotSerializableException("FencelineSerializer: " + in.available()
                        + " bytes left over after a '" + manifest + "' message of " + bytes.length + " bytes");
            }
            return o;
        } catch (NotSerializableException e) {
            throw e;
        } catch (IOException | FencelineException | IllegalArgumentException e) {
            NotSerializableException n = new NotSerializableException("FencelineSerializer: malformed '" + manifest
                    + "' message of " + bytes.length + " bytes: " + e);
            n.initCause(e);
            throw n;
        }
    }

    private static void blob(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] blob(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_BLOB || n > in.available()) {
            throw new IOException("a length of " + n + " with " + in.available() + " bytes left (at most " + MAX_BLOB
                    + ")");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    private ActorRefResolver resolver() {
        ActorRefResolver r = resolver;
        if (r == null) { // not in the constructor: the typed system may not exist yet there
            r = ActorRefResolver.get(Adapter.toTyped(system));
            resolver = r;
        }
        return r;
    }

    private String ref(ActorRef<?> ref) {
        return resolver().toSerializationFormat(ref);
    }

    private <T> ActorRef<T> resolve(String path) {
        return resolver().resolveActorRef(path);
    }
}
