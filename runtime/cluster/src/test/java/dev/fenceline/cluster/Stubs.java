package dev.fenceline.cluster;

import java.lang.reflect.Proxy;

/** Stand-ins for the module's collaborators (a worker, an endpoint), answering as a test says. */
final class Stubs {
    private Stubs() {
    }

    /** What a stub does: the method's name and arguments to its result. */
    interface Answer {
        Object answer(String method, Object[] args);
    }

    /**
     * @param type the interface
     * @param answer what each call returns (identity, equality and toString are the stub's own)
     * @return the stub
     */
    static <T> T stub(Class<T> type, Answer answer) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) ->
                switch (m.getName()) {
                    case "hashCode" -> System.identityHashCode(self);
                    case "equals" -> self == args[0];
                    case "toString" -> type.getSimpleName() + " stub";
                    default -> answer.answer(m.getName(), args);
                }));
    }
}
