package s1gym.scienceworld;

// ScienceWorld's step and its reads in one py4j round trip, and snapshots of a game inside the JVM.
//
// s1gym compiles this file at first use (s1gym/tasks/scienceworld/helper.py: javac into a cache folder) and
// puts the folder on the JVM's classpath.
//
// Reads: ``step`` plays a move and answers the step's text, look, inventory, score, completion and the valid
// list in one string (fields separated by \u0001), calling ScienceWorld's own methods in the order the Python
// engine called them one by one. Every call first turns Nagle's algorithm off on the py4j connection serving
// it: py4j writes a long answer (the valid list: about 27 KB) in 8 KB pieces and with Nagle's algorithm each
// waited up to 40 ms for the delayed ACK of the previous one. The valid list travels as a JSON array of rows
// (``validWire``: half the length of ScienceWorld's JSON, which repeats its keys on every row), and a list the
// caller holds already is named by a number instead of being sent again (``sent``).
//
// Snapshots: a deep copy of a PythonInterface (the game, its agent, task, parser, history: every object it
// reaches, field by field through sun.misc.Unsafe, sharing and cycles kept; no constructor runs: the families'
// shared copier, s1gym/engines/S1DeepCopy.java, compiled with this file) together with the JVM-global state a
// game reads: scala.util.Random's generator (``load`` seeds it with the variation), the UniqueIdentifier
// counter (new objects' ids) and the SimplifierProcessor's list. Restoring copies the stored game again into
// the live interface (the object py4j holds), so a snapshot restores any number of times. Shared rather than
// copied: the copier's base set (strings, boxed primitives, classes, enums, Scala ``object``s: the global
// state above is saved separately; objects without fields, ...) and the interface's task definitions; no
// records (S1DeepCopy's ``records`` is off here: no test checks ScienceWorld's classes for it).
//
// Children: ``children`` steps every move of a snapshot in one call (Lookahead and Search step all the
// candidates of a state), each child exactly a restore of the parent and ``step``.
//
// Identity: the family's JVM runs with -XX:hashCode=2 (every identity hash is 1, so hash sets of game objects
// iterate in insertion order and a copied set keeps working). An identity-keyed table would then degrade to a
// list, so the copier maps originals to copies by their (compressed) address (``byAddress``), valid while no
// collection moves objects: S1DeepCopy redoes a copy when the collectors' counts changed during it.

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;

import main.scala.scienceworld.runtime.SimplifierProcessor$;
import s1gym.jvm.S1DeepCopy;
import scala.collection.mutable.ArrayBuffer;
import scienceworld.actions.PossibleAction;
import scienceworld.input.ActionDefinitions;
import scienceworld.input.InputParser;
import scienceworld.objects.portal.Portal;
import scienceworld.runtime.AgentInterface;
import scienceworld.runtime.pythonapi.PythonInterface;
import scienceworld.struct.EnvObject;
import sun.misc.Unsafe;

public final class S1ScienceWorld {
    private static final Unsafe U;
    private static final char SEP = '\u0001';
    private static final long UID_COUNT, RNG_SEED, RNG_GAUSSIAN, RNG_HAS_GAUSSIAN;
    /** PythonInterface's TaskMaker1: every task's definitions (most of the interface's objects), read by
     *  ``load`` and the gold-path generator only: never copied, the live interface keeps its own */
    private static final long TASK_MAKER;
    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (Unsafe) f.get(null);
            UID_COUNT = U.objectFieldOffset(util.UniqueIdentifier$.class.getDeclaredField("count"));
            RNG_SEED = U.objectFieldOffset(Random.class.getDeclaredField("seed"));
            RNG_GAUSSIAN = U.objectFieldOffset(Random.class.getDeclaredField("nextNextGaussian"));
            RNG_HAS_GAUSSIAN = U.objectFieldOffset(Random.class.getDeclaredField("haveNextNextGaussian"));
            TASK_MAKER = U.objectFieldOffset(PythonInterface.class.getDeclaredField("taskMaker"));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** ScienceWorld's copier: no classes shared beyond the copier's base set, no records, keyed by address
     *  (the JVM's identity hashes are all alike: see the file's comment). */
    static final S1DeepCopy COPIER = new S1DeepCopy(null, false, true);

    // ------------------------------------------------------------------------------------------- reads
    private static final ThreadLocal<Boolean> NO_DELAY = new ThreadLocal<>();

    /** TCP_NODELAY on the py4j connection serving this thread (py4j runs each connection in a thread whose
     *  Runnable is the connection, which has getSocket()); anything unexpected leaves it alone. */
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

    /** ``observation``, then what SWEngine reads after a step, in its order: the valid list (from
     *  :meth:`validWire`: ScienceWorld's rows, compact), look, inventory, score, completion; separated by \u0001. */
    public static String read(PythonInterface pi, String observation) {
        noDelay();
        return pack(pi, observation, validWire(pi));
    }

    /** ``pi.step(move)`` and :meth:`read`, in one call. */
    public static String step(PythonInterface pi, String move) {
        noDelay();
        return read(pi, pi.step(move));
    }

    /** :meth:`read` for a caller that holds the valid list numbered ``have`` (:meth:`sent`). */
    public static String read(PythonInterface pi, String observation, int have) {
        noDelay();
        return answer(pi, observation, new int[] {have});
    }

    /** :meth:`step` for a caller that holds the valid list numbered ``have`` (:meth:`sent`). */
    public static String step(PythonInterface pi, String move, int have) {
        noDelay();
        return answer(pi, pi.step(move), new int[] {have});
    }

    /** :meth:`read`, the valid list as :meth:`sent` gives it (``have[0]``: the number the caller holds, then
     *  the number it will hold). The same ScienceWorld calls, in the same order. */
    private static String answer(PythonInterface pi, String observation, int[] have) {
        return pack(pi, observation, sent(validWire(pi), have));
    }

    /** ``observation``, ``valid`` (read first), then look, inventory, score and completion read now, joined by
     *  \u0001: the answer's fields in SWEngine's order. */
    private static String pack(PythonInterface pi, String observation, String valid) {
        String look = pi.freeActionLook();
        String inventory = pi.freeActionInventory();
        StringBuilder out = new StringBuilder(observation.length() + valid.length() + look.length() + inventory.length() + 64);
        out.append(observation).append(SEP).append(valid).append(SEP).append(look).append(SEP).append(inventory)
                .append(SEP).append(Double.toString(pi.getScore())).append(SEP).append(pi.getCompleted() ? '1' : '0');
        return out.toString();
    }

    // --------------------------------------------------------------------------- repeated valid lists
    /** Marks a valid list the caller holds already, or one it is to keep under a number. */
    private static final char SAME = '\u0006';
    /** The last valid lists sent, by number (a caller names the one it holds; an older one is sent again). */
    private static final int SENT_KEPT = 8;
    private static final java.util.LinkedHashMap<Integer, String> SENT = new java.util.LinkedHashMap<Integer, String>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, String> eldest) {
            return size() > SENT_KEPT;
        }
    };
    private static int sentCount = 0;

    /**
     * ``valid`` for a caller holding the list numbered ``have[0]`` (0: none): \u0006 and that number when
     * ``valid`` is that very text (a search's sibling children often show the same list; it is not sent
     * again), else \u0006, a new number, \u0006 and the text, which the caller keeps under that number (then
     * ``have[0]``). Only the number the caller names is ever referred to, so a caller that missed an answer
     * (an error between the JVM and it) still reads every list right.
     */
    private static synchronized String sent(String valid, int[] have) {
        if (have[0] > 0) {
            String held = SENT.get(have[0]);
            if (held != null && held.equals(valid)) return SAME + Integer.toString(have[0]);
        }
        int number = ++sentCount;
        SENT.put(number, valid);
        have[0] = number;
        return SAME + Integer.toString(number) + SAME + valid;
    }

    /** SWEngine's start of a game (the id counter restarted, ``load``, the score and completion cleared) and
     *  the moves (separated by newlines); returns ``load``'s error text. With ``reads`` every read the engine
     *  makes is made too (``read`` after the start and after each move, the task after the first): reading the
     *  valid list draws from the global random generator (ScienceWorld's unique-referent choice), so only such
     *  a replay reaches the state the moves reached when they were played. */
    public static String replay(PythonInterface pi, String task, int variation, String simplifications, String moves,
                                boolean reads) {
        noDelay();
        util.UniqueIdentifier.reset();
        String err = pi.load(task, variation, simplifications, false);
        pi.score_$eq(0.0);
        pi.isComplete_$eq(false);
        if (err != null && !err.trim().isEmpty()) return err;
        if (reads) {
            read(pi, "");
            pi.freeActionTaskDesc();
        }
        if (!moves.isEmpty()) {
            for (String move : moves.split("\n", -1)) {
                pi.step(move);
                if (reads) read(pi, "");
            }
        }
        return "";
    }

    // ------------------------------------------------------------------------------------------ valid list
    /** Off (``-Ds1gym.sw.fastValid=false``): :meth:`validJSON` is ScienceWorld's own call. */
    private static final boolean FAST_VALID = !"false".equals(System.getProperty("s1gym.sw.fastValid"));

    /**
     * ``pi.getValidActionObjectCombinationsJSON()``, the same text with the same draws from the global random
     * generator, in about half the time. ScienceWorld's version (1.2.3: AgentInterface, InputParser) names
     * every object of the universe uniquely on each call, though only the rooms' names are used (teleport),
     * through Scala collections; the unique-name choice draws from the global generator once its first ten
     * rounds leave duplicates, so it cannot be skipped. This runs the same algorithm over the same objects in
     * the same order (each object's referents from ScienceWorld's own getReferents, ScienceWorld's collection
     * of objects and its action generators), with Java collections. In the parser's ambiguity state, or when
     * an object has no referent (ScienceWorld's own code then fails), ScienceWorld's call runs instead.
     * tests/test_scienceworld_fast.py checks text and generator state against ScienceWorld's on many states.
     */
    public static String validJSON(PythonInterface pi) {
        PossibleAction[] actions = validActions(pi);
        if (actions == null) return pi.getValidActionObjectCombinationsJSON();
        StringBuilder out = new StringBuilder(actions.length * 96 + 32).append("{\"validActions\": [");
        for (int k = 0; k < actions.length; k++) {
            if (k > 0) out.append(',');
            out.append(actions[k].toTemplate().toJSON());
        }
        return out.append("]}").toString();
    }

    /**
     * The valid list as SWEngine reads it: the same rows as :meth:`validJSON` (made by the same call, so the
     * same draws from the global generator) as a JSON array of ``[text, template id, [object ids], [type
     * ids]]`` rows (ids joined by commas as the JSON joins them): about half of the JSON's length (its keys
     * repeated on every row), read by the same parser. When the fast list does not apply,
     * or a text holds a character the JSON would have to escape (a quote, a backslash, a control character:
     * the JSON parser would then read another text, or fail), the JSON itself (ScienceWorld's or
     * :meth:`validJSON`'s), which the engine parses as before.
     */
    public static String validWire(PythonInterface pi) {
        PossibleAction[] actions = validActions(pi);
        if (actions == null) return pi.getValidActionObjectCombinationsJSON();
        scienceworld.runtime.pythonapi.TemplateAction[] rows = new scienceworld.runtime.pythonapi.TemplateAction[actions.length];
        for (int k = 0; k < actions.length; k++) rows[k] = actions[k].toTemplate();
        int length = 2;
        for (int k = 0; k < rows.length; k++) {
            String text = rows[k].actionString();
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (c < 0x20 || c == '"' || c == '\\') return json(rows);
            }
            length += text.length() + 32;
        }
        StringBuilder out = new StringBuilder(length).append('[');
        for (int k = 0; k < rows.length; k++) {
            if (k > 0) out.append(',');
            out.append("[\"").append(rows[k].actionString()).append("\",").append(rows[k].templateID()).append(",[")
                    .append(rows[k].objectIDs().mkString(",")).append("],[").append(rows[k].typeIDs().mkString(","))
                    .append("]]");
        }
        return out.append(']').toString();
    }

    private static String json(scienceworld.runtime.pythonapi.TemplateAction[] rows) {
        StringBuilder out = new StringBuilder(rows.length * 96 + 32).append("{\"validActions\": [");
        for (int k = 0; k < rows.length; k++) {
            if (k > 0) out.append(',');
            out.append(rows[k].toJSON());
        }
        return out.append("]}").toString();
    }

    /** :meth:`validJSON`'s rows (ScienceWorld's algorithm over its objects, with Java collections); null
     *  where ScienceWorld's own call must run instead (nothing drawn from the global generator then). */
    private static PossibleAction[] validActions(PythonInterface pi) {
        if (!FAST_VALID || pi.agentInterface().isEmpty()) return null;
        AgentInterface ai = pi.agentInterface().get();
        if (ai.inputParser().isInAmbiguousState()) return null;
        EnvObject root = ai.getAgentVisibleObjects(false)._2();
        EnvObject[] visible = objects(InputParser.collectObjects(root, false));
        EnvObject[] all = objects(InputParser.collectObjects(ai.universe(), true));
        String[][] visibleRefs = new String[visible.length][], allRefs = new String[all.length][];
        Referents refs = new Referents(root);
        for (int k = 0; k < visible.length; k++) {
            visibleRefs[k] = refs.of(visible[k]);
            if (visibleRefs[k].length == 0) return null;
        }
        for (int k = 0; k < all.length; k++) {
            allRefs[k] = refs.of(all[k]);
            if (allRefs[k].length == 0) return null;
        }
        scala.collection.immutable.Map<Object, String> lut = lut(visible, visibleRefs);
        scala.collection.immutable.Map<Object, String> lutAll = lut(all, allRefs);
        return ActionDefinitions.mkPossibleActions(ai.agent(), visible, all, lut, lutAll);
    }

    /** ScienceWorld's self-check: "" when :meth:`validJSON` gives ScienceWorld's text and leaves the global
     *  generator where ScienceWorld's call leaves it, else what differs (the generator is left at ScienceWorld's). */
    public static String checkValid(PythonInterface pi) {
        java.util.concurrent.atomic.AtomicLong seed = (java.util.concurrent.atomic.AtomicLong) U.getObject(globalRandom(), RNG_SEED);
        long before = seed.get();
        String fast = validJSON(pi);
        long afterFast = seed.get();
        seed.set(before);
        String slow = pi.getValidActionObjectCombinationsJSON();
        long afterSlow = seed.get();
        if (!fast.equals(slow)) return "text differs:\n" + fast + "\n" + slow;
        if (afterFast != afterSlow) return "random generator differs";
        return "";
    }

    /** The global generator's seed (tests check that a read draws from it). */
    public static long globalSeed() {
        return ((java.util.concurrent.atomic.AtomicLong) U.getObject(globalRandom(), RNG_SEED)).get();
    }

    private static EnvObject[] objects(scala.collection.mutable.Set<EnvObject> set) {
        EnvObject[] out = new EnvObject[set.size()];
        scala.collection.Iterator<EnvObject> it = set.iterator();
        int k = 0;
        while (it.hasNext()) out[k++] = it.next();
        return out;
    }

    /**
     * Each object's referents from one perspective (:meth:`referents`), worked out once per object in one
     * valid-list call, by the object's unique id: the visible objects are among the universe's, and an
     * object's own names (``getReferents``) are read once though they name its contents too (ScienceWorld
     * reads a container's names for every referent of every object in it). Nothing changes the game during
     * the call, so every read gives what ScienceWorld's own reads give.
     */
    private static final class Referents {
        final EnvObject perspective;
        final HashMap<Long, String[]> sorted = new HashMap<>(), own = new HashMap<>();

        Referents(EnvObject perspective) {
            this.perspective = perspective;
        }

        String[] of(EnvObject o) {
            Long id = o.uuid();
            String[] out = sorted.get(id);
            if (out == null) {
                out = referents(o, perspective, this);
                sorted.put(id, out);
            }
            return out;
        }

        /** ``o.getReferents()`` as an array (its order is its iteration order). */
        String[] own(EnvObject o) {
            Long id = o.uuid();
            String[] out = own.get(id);
            if (out == null) {
                out = strings(o.getReferents());
                own.put(id, out);
            }
            return out;
        }
    }

    /** EnvObject.getReferentsWithContainers(perspective).toArray.sorted (1.2.3), with Java collections. */
    private static String[] referents(EnvObject o, EnvObject perspective, Referents cache) {
        String[] refs = o instanceof Portal ? strings(((Portal) o).getReferents(perspective)) : cache.own(o);
        HashSet<String> out = new HashSet<>();
        String[] containerRefs = null;  // the container's referents, read once (ScienceWorld reads them per referent)
        for (String ref : refs) {
            if (ref.trim().length() > 0) {
                out.add(ref.toLowerCase());
                if (containerRefs == null) {
                    scala.Option<EnvObject> container = o.getContainer();
                    containerRefs = container.isDefined() ? cache.own(container.get()) : new String[0];
                }
                for (String c : containerRefs) {
                    out.add((ref + " in " + c).toLowerCase());
                    out.add((ref + " on " + c).toLowerCase());
                }
            }
        }
        ArrayList<String> kept = new ArrayList<>(out.size());
        for (String r : out) if (r.length() > 1) kept.add(r);
        String[] sorted = kept.toArray(new String[0]);
        Arrays.sort(sorted);
        return sorted;
    }

    private static String[] strings(scala.collection.immutable.Set<String> set) {
        String[] out = new String[set.size()];
        scala.collection.Iterator<String> it = set.iterator();
        int k = 0;
        while (it.hasNext()) out[k++] = it.next();
        return out;
    }

    /** InputParser.getAllUniqueReferentsLUTObjList (1.2.3): object id -> its unique referent, chosen by
     *  InputParser.chooseUniqueReferents (its filter of duplicates, ten rounds of the next referent, ten of a
     *  random one from the global generator, every round over every object). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static scala.collection.immutable.Map<Object, String> lut(EnvObject[] objs, String[][] referents1) {
        // every distinct referent as an int (the rounds then count in an array)
        HashMap<String, Integer> ids = new HashMap<>();
        int[][] refIds1 = new int[referents1.length][];
        for (int i = 0; i < referents1.length; i++) {
            refIds1[i] = new int[referents1[i].length];
            for (int j = 0; j < referents1[i].length; j++) {
                Integer id = ids.get(referents1[i][j]);
                if (id == null) ids.put(referents1[i][j], id = ids.size());
                refIds1[i][j] = id;
            }
        }
        int[] count = new int[ids.size()];
        for (int[] refs : refIds1) for (int r : refs) count[r]++;  // (referents are lower case already)
        int[][] refIds = new int[refIds1.length][];
        String[][] referents = new String[referents1.length][];
        for (int i = 0; i < refIds1.length; i++) {
            int n = 0;
            for (int r : refIds1[i]) if (count[r] <= 1) n++;
            if (n == 0) {
                refIds[i] = refIds1[i];
                referents[i] = referents1[i];
                continue;
            }
            refIds[i] = new int[n];
            referents[i] = new String[n];
            n = 0;
            for (int j = 0; j < refIds1[i].length; j++) {
                if (count[refIds1[i][j]] <= 1) {
                    refIds[i][n] = refIds1[i][j];
                    referents[i][n++] = referents1[i][j];
                }
            }
        }
        int[] indices = new int[referents.length];
        int[] frequency = new int[ids.size()];
        scala.util.Random$ random = scala.util.Random$.MODULE$;
        for (int attempt = 0; attempt < 20; attempt++) {
            Arrays.fill(frequency, 0);
            for (int i = 0; i < refIds.length; i++) frequency[refIds[i][indices[i]]]++;
            for (int i = 0; i < refIds.length; i++) {
                if (frequency[refIds[i][indices[i]]] > 1) {
                    indices[i] = attempt < 10 ? (indices[i] + 1) % refIds[i].length : random.nextInt(refIds[i].length);
                }
            }
        }
        scala.collection.immutable.Map out = scala.collection.immutable.Map$.MODULE$.empty();
        for (int i = 0; i < objs.length; i++) {
            out = out.$plus(new scala.Tuple2<Object, String>(objs[i].uuid(), referents[i][indices[i]].toLowerCase()));
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------- snapshots
    private static final class Stored {
        final PythonInterface pi;
        final long uid, seed;
        final double gaussian;
        final boolean hasGaussian;
        final Object[] simplifications;

        Stored(PythonInterface pi, long uid, long seed, double gaussian, boolean hasGaussian, Object[] simplifications) {
            this.pi = pi; this.uid = uid; this.seed = seed; this.gaussian = gaussian; this.hasGaussian = hasGaussian;
            this.simplifications = simplifications;
        }
    }

    private static final Map<Integer, Stored> STORE = new HashMap<>();
    private static int nextId = 1;

    private static Random globalRandom() {
        return scala.util.Random$.MODULE$.self();
    }

    /** Snapshot ``pi`` and the JVM-global state; returns the snapshot's id (``free``: ids to drop first). */
    public static synchronized int take(PythonInterface pi, String free) throws InstantiationException {
        noDelay();
        free(free);
        Random rng = globalRandom();
        ArrayBuffer<?> simp = SimplifierProcessor$.MODULE$.simplifications();
        Object[] simplifications = new Object[simp.length()];
        for (int k = 0; k < simplifications.length; k++) simplifications[k] = simp.apply(k);
        PythonInterface copy = (PythonInterface) COPIER.copy(pi, U.getObject(pi, TASK_MAKER));
        int id = nextId++;
        STORE.put(id, new Stored(copy, U.getLong(util.UniqueIdentifier$.MODULE$, UID_COUNT),
                ((java.util.concurrent.atomic.AtomicLong) U.getObject(rng, RNG_SEED)).get(),
                U.getDouble(rng, RNG_GAUSSIAN), U.getBoolean(rng, RNG_HAS_GAUSSIAN), simplifications));
        return id;
    }

    /** The separator of :meth:`children`'s answers (no ScienceWorld text holds it, nor \u0001's fields). */
    private static final char RS = '\u0002';

    /**
     * The children of snapshot ``parent``, in one call: for each of ``moves`` (separated by newlines, which no
     * ScienceWorld move holds) exactly what a fork's first step does, ``restore(pi, parent)`` then
     * :meth:`step` (the move and every read, in the same order: the valid list draws from the global random
     * generator, so any other order would give other children). No child is stored: stored, a state's
     * hundreds of children stayed alive together and the young collections copied them all, which cost more
     * than the round trips saved (docs/benchmarks.md); the Python side keeps a child as its parent and its
     * move, which its first restore steps again (and snapshots). ``pi`` is then restored to ``parent``: afterwards ``pi`` and the global state are at ``parent``,
     * as after ``restore``. Returns :meth:`step`'s answer per move (its valid list as :meth:`sent` gives it to
     * a caller holding list ``have`` and reading the answers in order), separated by \u0002; null if
     * ``parent`` is unknown.
     */
    public static synchronized String children(PythonInterface pi, int parent, String moves, String free, int have)
            throws InstantiationException {
        noDelay();
        free(free);
        if (!STORE.containsKey(parent)) return null;
        StringBuilder out = new StringBuilder(1 << 16);
        int[] held = {have};  // the valid list the caller will hold after the answers before this one
        int start = 0;
        try {
            while (start <= moves.length()) {
                int end = moves.indexOf('\n', start);
                if (end < 0) end = moves.length();
                bring(pi, parent);
                if (start > 0) out.append(RS);
                out.append(answer(pi, pi.step(moves.substring(start, end)), held));
                start = end + 1;
            }
        } finally {
            bring(pi, parent);  // the engine's defined state: the parent
        }
        return out.toString();
    }

    /** Bring ``pi`` and the global state to snapshot ``id`` (a fresh copy: the snapshot stays usable); false if
     *  ``id`` is unknown. */
    public static synchronized boolean restore(PythonInterface pi, int id, String free) throws InstantiationException {
        noDelay();
        free(free);
        return bring(pi, id);
    }

    /** :meth:`restore` without its housekeeping (the connection's delay, the ids to free). */
    @SuppressWarnings("unchecked")
    private static boolean bring(PythonInterface pi, int id) throws InstantiationException {
        Stored s = STORE.get(id);
        if (s == null) return false;
        PythonInterface copy = (PythonInterface) COPIER.copy(s.pi, U.getObject(s.pi, TASK_MAKER));
        COPIER.copyFields(copy, pi, TASK_MAKER);  // the live interface keeps its own task definitions
        U.putLong(util.UniqueIdentifier$.MODULE$, UID_COUNT, s.uid);
        Random rng = globalRandom();
        ((java.util.concurrent.atomic.AtomicLong) U.getObject(rng, RNG_SEED)).set(s.seed);
        U.putDouble(rng, RNG_GAUSSIAN, s.gaussian);
        U.putBoolean(rng, RNG_HAS_GAUSSIAN, s.hasGaussian);
        ArrayBuffer<Object> simp = (ArrayBuffer<Object>) (ArrayBuffer<?>) SimplifierProcessor$.MODULE$.simplifications();
        simp.clear();
        for (Object o : s.simplifications) simp.$plus$eq(o);
        return true;
    }

    /** A child held as its parent and its move, snapshotted: ``restore(pi, parent)``, :meth:`step` (the move and
     *  every read, whose answer the caller has already: it is not sent again) and ``take``, in one call; the
     *  snapshot's id, 0 if ``parent`` is unknown, -1 if the child's copy failed (``pi`` is at the child then;
     *  a failed copy of the parent throws, with ``pi`` unchanged). */
    public static synchronized int stepTake(PythonInterface pi, int parent, String move, String free)
            throws InstantiationException {
        noDelay();
        free(free);
        if (!bring(pi, parent)) return 0;
        step(pi, move);
        try {
            return take(pi, "");
        } catch (InstantiationException | RuntimeException e) {
            return -1;
        }
    }

    /** ``restore`` then :meth:`step`, in one call; null if ``id`` is unknown. */
    public static String restoreStep(PythonInterface pi, int id, String move, String free) throws InstantiationException {
        if (!restore(pi, id, free)) return null;
        return step(pi, move);
    }

    /** Snapshots held (after freeing ``free``). */
    public static synchronized int held(String free) {
        free(free);
        return STORE.size();
    }

    private static void free(String ids) {
        if (ids == null || ids.isEmpty()) return;
        for (String s : ids.split(",")) {
            if (!s.isEmpty()) STORE.remove(Integer.parseInt(s));
        }
    }
}
