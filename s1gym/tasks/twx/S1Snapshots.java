package s1gym.twx;

// Snapshots of TextWorldExpress game objects inside the JVM, so a fork costs a copy instead of a replay.
//
// s1gym compiles this file at first use, with the shared copier s1gym/engines/S1DeepCopy.java
// (s1gym/tasks/twx/snapshots.py: javac into a cache folder), and puts the folder on the JVM's classpath. A
// snapshot is a deep copy of a PythonInterface's game (every object the game reaches, by field, with sharing
// and cycles kept: S1DeepCopy) held here under an int id, together with the interface's current StepResult
// (immutable: shared), which PythonInterface.step reads to check a move. Restoring copies the stored game
// again into the interface, so one snapshot restores any number of times.
//
// What is shared rather than copied: what S1DeepCopy shares (strings, boxed primitives, enums, Scala
// `object`s, objects without fields, ...), StepResults, and records whose fields are all final and themselves
// of such types (a subclass adding mutable state behind such a field would be shared wrongly: TWX has none;
// tests/test_twx_snapshots.py checks forks against fresh games move by move). No constructor runs, so
// java.util.Random and scala.util.Random keep their seeds and a fork draws the same numbers as the original.
//
// A stored game copied a second time keeps the plan of its copy (S1DeepCopy.Plan: its objects and where each
// reference points, as indices; made while copying, at about 1.2 times a copy's cost): every later restore
// allocates and fills the copy from arrays, with no identity table, in under half the time of a copy by
// walking the graph. A parent whose children ``children`` steps is planned at its first copy (every child
// copies it). Nothing ever steps a stored game, so its plan stays true. A plan takes about two thirds of the
// room of the game it copies (CookingWorld hard at depth 40: 22 KiB a snapshot, 37 with its plan), so only
// the snapshots restored more than once (or expanded) get one.
//
// Ids are freed in batches: each call takes a comma-separated list of ids Python no longer holds, so
// dropping a snapshot costs no round trip of its own.

import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Map;

import s1gym.jvm.S1DeepCopy;
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

    /** TWX's copier: StepResults shared, and records nothing can change; keyed by identity hash (TWX's JVM
     *  spreads them, so no collection can spoil a copy). */
    static final S1DeepCopy COPIER = new S1DeepCopy(c -> StepResult.class.isAssignableFrom(c), true, false);

    private static final class Stored {
        final TextGame game;
        final StepResult result;
        /** how to copy ``game`` again, made by its second copy (see the file's comment) */
        S1DeepCopy.Plan plan;
        int copies;

        Stored(TextGame game, StepResult result) {
            this.game = game;
            this.result = result;
        }

        /** A fresh copy of the stored game: by walking it the first time (unless ``more`` copies follow in the
         *  same call, a parent's children), then from its plan, which the second copy makes. */
        TextGame copy(boolean more) throws InstantiationException {
            if (plan != null) return (TextGame) plan.copy();
            if (copies++ == 0 && !more) return (TextGame) COPIER.copy(game);
            plan = COPIER.planned(game);
            return (TextGame) plan.takeFirst();
        }
    }

    private static final Map<Integer, Stored> STORE = new HashMap<>();
    private static int nextId = 1;

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
        TextGame game = (TextGame) COPIER.copy(pi.game());
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
        pi.game_$eq(s.copy(false));
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
        boolean many = moves.indexOf('\n') >= 0;
        try {
            while (start <= moves.length()) {
                int end = moves.indexOf('\n', start);
                if (end < 0) end = moves.length();
                pi.game_$eq(p.copy(many));
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
