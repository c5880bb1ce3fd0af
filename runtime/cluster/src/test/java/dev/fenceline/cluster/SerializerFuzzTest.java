package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.NotSerializableException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * Coverage-guided fuzzing of {@link FencelineSerializer}, which decodes what another member sent:
 * every manifest, any bytes; decoded, or refused with a {@code NotSerializableException} that says
 * what was wrong, never anything else. The test command runs the corpus; {@code bin/fuzz} fuzzes
 * for a million executions.
 */
class SerializerFuzzTest {
    private static final String[] MANIFESTS = {"A", "K", "D", "d", "L", "R", "?"};
    private static FencelineSerializer serializer;

    private static synchronized FencelineSerializer serializer() {
        if (serializer == null) {
            ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "serializer-fuzz");
            serializer = (FencelineSerializer) SerializationExtension.get(Adapter.toClassic(system))
                    .serializerByIdentity().apply(FencelineSerializer.IDENTIFIER);
        }
        return serializer;
    }

    @FuzzTest(maxExecutions = 1_000_000)
    void anyManifestAnyBytes(FuzzedDataProvider data) {
        String manifest = MANIFESTS[data.consumeInt(0, MANIFESTS.length - 1)];
        byte[] bytes = data.consumeRemainingAsBytes();
        try {
            serializer().fromBinary(bytes, manifest);
        } catch (NotSerializableException refused) {
            assertTrue(refused.getMessage() != null && !refused.getMessage().isEmpty(), "says what was wrong");
        }
    }
}
