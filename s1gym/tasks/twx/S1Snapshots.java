package s1gym.twx;

// Snapshots of TextWorldExpress game objects inside the JVM, so a fork costs a copy instead of a replay.
//
// s1gym compiles this file at first use (s1gym/tasks/twx/snapshots.py: javac into a cache folder) and puts
// the folder on the JVM's classpath. A snapshot is a deep copy of a PythonInterface's game (every object the
// game reaches, by field, with sharing and cycles kept) held here under an int id, together with the
// interface's current StepResult (immutable: shared), which PythonInterface.step reads to check a move.
// Restoring copies the stored game again into the interface, so one snapshot restores any number of times.
//
// What is shared rather than copied: strings, boxed primitives, classes, enums, Scala `object`s (a class
// whose static MODULE$ is the instance), StepResults, objects without fields, and records whose fields are
// all final and themselves of such types (a subclass adding mutable state behind such a field would be
// shared wrongly: TWX has none; tests/test_twx_snapshots.py checks forks against fresh games move by move).
// Everything else is copied field by field (sun.misc.Unsafe: no constructor runs, so java.util.Random and
// scala.util.Random keep their seeds and a fork draws the same numbers as the original).
//
// Ids are freed in batches: each call takes a comma-separated list of ids Python no longer holds, so
// dropping a snapshot costs no round trip of its own.

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import sun.misc.Unsafe;
import textworldexpress.runtime.PythonInterface;
import textworldexpress.struct.StepResult;
import textworldexpress.struct.TextGame;

public final class S1Snapshots {
    private static final Unsafe U;
    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final class Stored {
        final TextGame game;
        final StepResult result;
        Stored(TextGame game, StepResult result) { this.game = game; this.result = result; }
    }

    private static final Map<Integer, Stored> STORE = new HashMap<>();
    private static int nextId = 1;

    /** Per class: how its instances are copied, and the offsets of their instance fields by size. */
    private static final class Layout {
        static final int COPY = 0, SHARE = 1, PRIMITIVE_ARRAY = 2, SHALLOW_ARRAY = 3, ARRAY = 4;
        final int kind;
        final long[] refs;       // reference fields
        final long[] longs;      // long and double fields (8 bytes)
        final long[] ints;       // int and float fields (4 bytes)
        final long[] shorts;     // short and char fields (2 bytes)
        final long[] bytes;      // byte and boolean fields (1 byte)
        final Object module;     // a Scala object's one instance (shared), else null

        Layout(Class<?> c) {
            List<Long> r = new ArrayList<>(), lo = new ArrayList<>(), in = new ArrayList<>(),
                    sh = new ArrayList<>(), by = new ArrayList<>();
            if (c.isArray()) {
                Class<?> e = c.getComponentType();
                kind = e.isPrimitive() ? PRIMITIVE_ARRAY : sharedClass(e) && Modifier.isFinal(e.getModifiers())
                        ? SHALLOW_ARRAY : ARRAY;
                module = null;
            } else if (sharedClass(c) || immutable(c, 0)) {
                kind = SHARE;
                module = null;
            } else {
                for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
                    for (Field f : k.getDeclaredFields()) {
                        if (Modifier.isStatic(f.getModifiers())) continue;
                        long off = U.objectFieldOffset(f);
                        Class<?> t = f.getType();
                        if (!t.isPrimitive()) r.add(off);
                        else if (t == long.class || t == double.class) lo.add(off);
                        else if (t == int.class || t == float.class) in.add(off);
                        else if (t == short.class || t == char.class) sh.add(off);
                        else by.add(off);
                    }
                }
                module = moduleOf(c);
                // no state at all (a marker, a stateless function): nothing to copy
                kind = r.isEmpty() && lo.isEmpty() && in.isEmpty() && sh.isEmpty() && by.isEmpty() ? SHARE : COPY;
            }
            refs = unbox(r); longs = unbox(lo); ints = unbox(in); shorts = unbox(sh); bytes = unbox(by);
        }
    }

    private static long[] unbox(List<Long> xs) {
        long[] out = new long[xs.size()];
        for (int k = 0; k < out.length; k++) out[k] = xs.get(k);
        return out;
    }

    private static final ClassValue<Layout> LAYOUTS = new ClassValue<Layout>() {
        @Override
        protected Layout computeValue(Class<?> c) {
            return new Layout(c);
        }
    };

    /** Values nothing changes: shared by the original and its copies. */
    private static boolean sharedClass(Class<?> c) {
        return c == String.class || c == Class.class || c.isEnum() || c == Boolean.class || c == Character.class
                || c == Integer.class || c == Long.class || c == Double.class || c == Float.class
                || c == Short.class || c == Byte.class || StepResult.class.isAssignableFrom(c);
    }

    /** Records nothing can change: every field final and of a primitive, shared or (so) immutable type
     *  (TWX's ActionHistory and GameScore: the history grows with every move, so sharing it matters). */
    private static boolean immutable(Class<?> c, int depth) {
        if (sharedClass(c)) return true;
        if (depth > 3 || c.isArray() || c.isInterface() || Modifier.isAbstract(c.getModifiers())) return false;
        boolean any = false;
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                int m = f.getModifiers();
                if (Modifier.isStatic(m)) continue;
                if (!Modifier.isFinal(m)) return false;
                Class<?> t = f.getType();
                if (!t.isPrimitive() && !immutable(t, depth + 1)) return false;
                any = true;
            }
        }
        return any;
    }

    /** The instance a Scala `object` class holds in its static MODULE$, else null. */
    private static Object moduleOf(Class<?> c) {
        try {
            Field f = c.getDeclaredField("MODULE$");
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == c) {
                f.setAccessible(true);
                return f.get(null);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // not a Scala object
        }
        return null;
    }

    /** A deep copy of everything ``root`` reaches (sharing and cycles kept). */
    static Object deepCopy(Object root) throws InstantiationException {
        IdentityHashMap<Object, Object> seen = new IdentityHashMap<>(1024);
        ArrayDeque<Object> todo = new ArrayDeque<>(256);  // pairs: original, copy
        Object out = copyOf(root, seen, todo);
        while (!todo.isEmpty()) {
            Object src = todo.pop();
            Object dst = todo.pop();
            Layout l = LAYOUTS.get(src.getClass());
            if (l.kind == Layout.ARRAY) {
                Object[] b = (Object[]) dst;
                for (int k = 0; k < b.length; k++) b[k] = copyOf(b[k], seen, todo);  // b started as a clone
                continue;
            }
            for (long off : l.longs) U.putLong(dst, off, U.getLong(src, off));
            for (long off : l.ints) U.putInt(dst, off, U.getInt(src, off));
            for (long off : l.shorts) U.putShort(dst, off, U.getShort(src, off));
            for (long off : l.bytes) U.putByte(dst, off, U.getByte(src, off));
            for (long off : l.refs) U.putObject(dst, off, copyOf(U.getObject(src, off), seen, todo));
        }
        return out;
    }

    private static Object copyOf(Object o, IdentityHashMap<Object, Object> seen, ArrayDeque<Object> todo)
            throws InstantiationException {
        if (o == null) return null;
        Layout l = LAYOUTS.get(o.getClass());
        if (l.kind == Layout.SHARE || l.module == o) return o;
        Object done = seen.get(o);
        if (done != null) return done;
        Object copy;
        switch (l.kind) {
            case Layout.PRIMITIVE_ARRAY:
                copy = primitiveClone(o);
                seen.put(o, copy);
                return copy;
            case Layout.SHALLOW_ARRAY:
                copy = ((Object[]) o).clone();
                seen.put(o, copy);
                return copy;
            case Layout.ARRAY:
                copy = ((Object[]) o).clone();
                break;
            default:
                copy = U.allocateInstance(o.getClass());
        }
        seen.put(o, copy);
        todo.push(copy);
        todo.push(o);
        return copy;
    }

    private static Object primitiveClone(Object o) {
        if (o instanceof int[]) return ((int[]) o).clone();
        if (o instanceof boolean[]) return ((boolean[]) o).clone();
        if (o instanceof double[]) return ((double[]) o).clone();
        if (o instanceof long[]) return ((long[]) o).clone();
        if (o instanceof char[]) return ((char[]) o).clone();
        if (o instanceof byte[]) return ((byte[]) o).clone();
        if (o instanceof float[]) return ((float[]) o).clone();
        return ((short[]) o).clone();
    }

    private static void free(String ids) {
        if (ids == null || ids.isEmpty()) return;
        for (String s : ids.split(",")) {
            if (!s.isEmpty()) STORE.remove(Integer.parseInt(s));
        }
    }

    /** Snapshot ``pi``'s game and step result; returns the snapshot's id (``free``: ids to drop first). */
    public static synchronized int take(PythonInterface pi, String free) throws InstantiationException {
        noDelay();
        free(free);
        TextGame game = (TextGame) deepCopy(pi.game());
        int id = nextId++;
        STORE.put(id, new Stored(game, pi.curStepResult()));
        return id;
    }

    /** Bring ``pi`` to snapshot ``id`` (a fresh copy: the snapshot stays usable); false if ``id`` is unknown. */
    public static synchronized boolean restore(PythonInterface pi, int id, String free) throws InstantiationException {
        noDelay();
        free(free);
        Stored s = STORE.get(id);
        if (s == null) return false;
        pi.game_$eq((TextGame) deepCopy(s.game));
        pi.curStepResult_$eq(s.result);
        return true;
    }

    /** ``restore`` then ``pi.stepJSON(move)`` in one call: the step's JSON, null if ``id`` is unknown. */
    public static String restoreStep(PythonInterface pi, int id, String move, String free)
            throws InstantiationException {
        if (!restore(pi, id, free)) return null;
        return pi.stepJSON(move);
    }

    /**
     * The children of snapshot ``parent``, in one call: for each of ``moves`` (separated by newlines, which no
     * TWX action holds) ``pi`` is brought to a fresh copy of the parent and plays the move, and the game it
     * reached is stored as the child's snapshot. The stepped game itself is stored, not a copy of it: the copy
     * it was stepped from is the parent's, so nothing else holds it. ``pi``'s game is then left null (it is a
     * snapshot now and must not be stepped); the caller restores ``pi`` before using it again.
     * Returns a JSON array with one ``[id, step JSON]`` per move, in order; null if ``parent`` is unknown.
     */
    public static synchronized String children(PythonInterface pi, int parent, String moves, String free)
            throws InstantiationException {
        noDelay();
        free(free);
        Stored p = STORE.get(parent);
        if (p == null) return null;
        StringBuilder out = new StringBuilder(moves.length() * 64).append('[');
        int first = nextId, start = 0;
        try {
            while (start <= moves.length()) {
                int end = moves.indexOf('\n', start);
                if (end < 0) end = moves.length();
                pi.game_$eq((TextGame) deepCopy(p.game));
                pi.curStepResult_$eq(p.result);
                String json = pi.stepJSON(moves.substring(start, end));
                int id = nextId++;
                STORE.put(id, new Stored(pi.game(), pi.curStepResult()));
                if (out.length() > 1) out.append(',');
                out.append('[').append(id).append(',').append(json).append(']');
                start = end + 1;
            }
        } catch (RuntimeException | InstantiationException e) {
            for (int id = first; id < nextId; id++) STORE.remove(id);  // Python never learns these ids
            throw e;
        } finally {
            pi.game_$eq(null);
        }
        return out.append(']').toString();
    }

    /** ``pi``'s object tree (TWX's JSON), on a connection that sends it without waiting (see ``noDelay``). */
    public static String objectTree(PythonInterface pi) {
        noDelay();
        return pi.game().getObjectTree();
    }

    private static final ThreadLocal<Boolean> NO_DELAY = new ThreadLocal<>();

    /**
     * TCP_NODELAY on the py4j connection serving this thread. py4j's Java side writes a long answer in 8 KB
     * pieces; with Nagle's algorithm the second waits for the ACK of the first, which Linux delays by up to
     * 40 ms: a 14 KB object tree took 47 ms to arrive against 0.3 ms to build. py4j runs each connection in
     * a thread whose Runnable is the connection (it has getSocket()); anything unexpected leaves it alone.
     */
    public static void noDelay() {
        if (NO_DELAY.get() != null) return;
        NO_DELAY.set(Boolean.TRUE);
        try {
            Object target = U.getObject(Thread.currentThread(), U.objectFieldOffset(Thread.class.getDeclaredField("target")));
            if (target == null) return;
            Object socket = target.getClass().getMethod("getSocket").invoke(target);
            if (socket instanceof java.net.Socket) ((java.net.Socket) socket).setTcpNoDelay(true);
        } catch (Throwable e) {
            // another py4j or Java: the answers arrive as before
        }
    }

    /** Snapshots held (tests and benchmarks read it). */
    public static synchronized int held(String free) {
        free(free);
        return STORE.size();
    }
}
