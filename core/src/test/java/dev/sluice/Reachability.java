package dev.sluice;

import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Whether one object holds another strongly, by walking the fields of the object graph: the deterministic form of "the
 * collector would free it", which a test can assert without asking for a collection ({@link System#gc()} is a hint a
 * JVM may ignore). Sluice's own classes are walked field by field (static fields too: a cache would keep a table
 * alive); the JDK's containers through their public API (maps, collections, atomic references and arrays); object
 * arrays element by element. A {@link Reference} (weak, soft) does not hold its referent, and other JDK objects
 * (strings, boxes, threads, classes) are leaves: Sluice keeps what it keeps in its own fields and in those containers.
 */
public final class Reachability {
    private Reachability() {}

    /** Whether {@code target} can be reached from {@code root} through strong references. */
    public static boolean strongly(Object root, Object target) {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Object> todo = new ArrayDeque<>();
        todo.push(root);
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            if (o == target) {
                return true;
            }
            if (!seen.add(o)) {
                continue;
            }
            for (Object next : referencesOf(o)) {
                if (next != null) {
                    todo.push(next);
                }
            }
        }
        return false;
    }

    private static Iterable<?> referencesOf(Object o) {
        Class<?> c = o.getClass();
        if (o instanceof Reference<?>) {
            return Set.of();
        }
        if (c.isArray()) {
            if (c.getComponentType().isPrimitive()) {
                return Set.of();
            }
            return java.util.Arrays.asList((Object[]) o);
        }
        if (o instanceof Map<?, ?> m) {
            java.util.List<Object> all = new java.util.ArrayList<>(m.keySet());
            all.addAll(m.values());
            return all;
        }
        if (o instanceof Iterable<?> it && !c.getName().startsWith("dev.sluice.")) {
            return it;
        }
        if (o instanceof AtomicReference<?> r) {
            return java.util.Collections.singletonList(r.get());
        }
        if (o instanceof AtomicReferenceArray<?> a) {
            java.util.List<Object> all = new java.util.ArrayList<>();
            for (int i = 0; i < a.length(); i++) {
                all.add(a.get(i));
            }
            return all;
        }
        if (!c.getName().startsWith("dev.sluice.")) {
            return Set.of();
        }
        java.util.List<Object> all = new java.util.ArrayList<>();
        for (Class<?> k = c; k != null && k.getName().startsWith("dev.sluice."); k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getType().isPrimitive()) {
                    continue;
                }
                try {
                    f.setAccessible(true);
                    all.add(Modifier.isStatic(f.getModifiers()) ? f.get(null) : f.get(o));
                } catch (IllegalAccessException | RuntimeException e) {
                    throw new AssertionError("cannot read " + f + " of " + c.getName(), e);
                }
            }
        }
        return all;
    }
}
