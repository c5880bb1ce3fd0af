package dev.fenceline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Handles on a class's own fields, for counters and flags kept as plain volatile fields rather than
 * atomic objects (a worker holds thousands of the objects that own them).
 */
public final class VarHandles {
    private VarHandles() {
    }

    /**
     * @param lookup the field owner's lookup ({@code MethodHandles.lookup()} in that class)
     * @param name the field's name
     * @param type the field's type
     * @return the handle
     * @throws ExceptionInInitializerError if there is no such field (a static initializer's error)
     */
    public static VarHandle field(MethodHandles.Lookup lookup, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A field made at first use by whichever thread gets there first (tables most owners never need).
     *
     * @param <T> the field's type
     * @param handle the field's handle
     * @param owner the object that holds the field
     * @param make makes a value; every thread but the first one's is dropped
     * @return the field's value, made if it was null
     */
    @SuppressWarnings("unchecked")
    public static <T> T made(VarHandle handle, Object owner, java.util.function.Supplier<T> make) {
        T now = (T) handle.getAcquire(owner);
        if (now != null) {
            return now;
        }
        T mine = make.get();
        T first = (T) handle.compareAndExchange(owner, null, mine);
        return first != null ? first : mine;
    }
}
