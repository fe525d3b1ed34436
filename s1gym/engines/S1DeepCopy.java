package s1gym.jvm;

// Deep copies of a game's object graph inside a JVM: the one copier the families' Java helpers share
// (TextWorldExpress's S1Snapshots.java, ScienceWorld's S1ScienceWorld.java). s1gym compiles this file
// together with a family's helper (s1gym/engines/jvm.py, compile_helper) into that family's cache folder.
//
// A copy reaches every object the root reaches, field by field through sun.misc.Unsafe (no constructor runs,
// so java.util.Random and scala.util.Random keep their seeds and a copy draws the same numbers as the
// original), keeping sharing and cycles. Shared rather than copied: strings, boxed primitives, classes,
// enums, references, threads, class loaders, hidden classes, Scala `object`s (a class whose static MODULE$ is
// the instance), objects without fields, the classes the family names (``Sharing``), with ``records`` the
// records nothing can change (every field final and of such a type: a subclass adding mutable state behind
// such a field would be shared wrongly, so a family turns it on only where its tests check copies against
// fresh games), and the objects passed as ``shared`` to a copy.
//
// Originals are mapped to their copies in an open-addressing table reused from copy to copy (only the slots
// a copy used are emptied after it), keyed either by identity hash (TWX) or, for a JVM whose identity hashes
// are all alike (ScienceWorld's runs with -XX:hashCode=2 so that hash sets of game objects iterate in
// insertion order; an IdentityHashMap would degrade to a list there), by address (compressed or not): no
// identity hash is asked of any object then. Addresses hold while no collection moves objects: a copy during
// which the collectors' counts changed is redone. Where identity hashes are spread the identity key is the
// cheaper (no collector check; on TWX's games a copy by address took up to 1.5 times as long).
//
// A ``Plan`` is a copy compiled once: the graph's objects in order, each one's layout, and each reference
// field's target as an index (or none: the graph's own value, null or kept as it is). Copying from a plan
// allocates the objects and fills their fields from arrays: no table at all. A plan holds while nothing
// changes the graph it was made from (a snapshot nobody steps), and it holds the graph's objects (no
// addresses: collections do not matter).

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import sun.misc.Unsafe;

public final class S1DeepCopy {
    /** Which classes (besides the ones every copier shares) a family's copies share instead of copying. */
    public interface Sharing {
        boolean shares(Class<?> c);
    }

    static final Unsafe U;
    private static final boolean COMPRESSED;
    private static final long ARRAY_BASE;

    /** The primitive fields of an object of layout {@code l} from {@code src} into {@code dst}. */
    static void copyPrimitives(Layout l, Object src, Object dst) {
        for (long off : l.longs) U.putLong(dst, off, U.getLong(src, off));
        for (long off : l.ints) U.putInt(dst, off, U.getInt(src, off));
        for (long off : l.shorts) U.putShort(dst, off, U.getShort(src, off));
        for (long off : l.bytes) U.putByte(dst, off, U.getByte(src, off));
    }
    private static final GarbageCollectorMXBean[] COLLECTORS;
    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        COMPRESSED = U.arrayIndexScale(Object[].class) == 4;
        ARRAY_BASE = U.arrayBaseOffset(Object[].class);
        COLLECTORS = ManagementFactory.getGarbageCollectorMXBeans().toArray(new GarbageCollectorMXBean[0]);
    }

    /** The index of a reference that is not copied: the target is the original value itself (or null). */
    private static final int SAME = -1;
    /** Copies redone at most this many times when collections keep moving objects during them. */
    private static final int ATTEMPTS = 8;

    private final Sharing sharing;
    private final boolean records;
    private final boolean byAddress;
    private final ClassValue<Layout> layouts = new ClassValue<Layout>() {
        @Override
        protected Layout computeValue(Class<?> c) {
            return Layout.of(S1DeepCopy.this, c);
        }
    };

    /** ``sharing``: the family's classes shared as they are (null: none); ``records``: also share records
     *  nothing can change (see the file's comment); ``byAddress``: key the table by address, for a JVM whose
     *  identity hashes are all alike (-XX:hashCode=2), else by identity hash (cheaper where the hashes are
     *  spread: no collection check, no copy redone). */
    public S1DeepCopy(Sharing sharing, boolean records, boolean byAddress) {
        this.sharing = sharing;
        this.records = records;
        this.byAddress = byAddress;
    }

    // ------------------------------------------------------------------------------------------- layouts
    /** Per class: how its instances are copied, and the offsets of their instance fields by size. */
    static final class Layout {
        static final int COPY = 0, SHARE = 1, PRIMITIVE_ARRAY = 2, SHALLOW_ARRAY = 3, ARRAY = 4;
        final int kind;
        final long[] refs;       // reference fields
        final long[] longs;      // long and double fields (8 bytes)
        final long[] ints;       // int and float fields (4 bytes)
        final long[] shorts;     // short and char fields (2 bytes)
        final long[] bytes;      // byte and boolean fields (1 byte)
        final Object module;     // a Scala object's one instance (shared), else null
        final Class<?> type;

        private Layout(Class<?> c, int kind, long[][] offsets, Object module) {
            this.kind = kind;
            this.type = c;
            refs = offsets[0]; longs = offsets[1]; ints = offsets[2]; shorts = offsets[3]; bytes = offsets[4];
            this.module = module;
        }

        /** ``c``'s layout under ``copier``'s sharing rules. */
        static Layout of(S1DeepCopy copier, Class<?> c) {
            long[][] none = {new long[0], new long[0], new long[0], new long[0], new long[0]};
            if (c.isArray()) {
                Class<?> e = c.getComponentType();
                int kind = e.isPrimitive() ? PRIMITIVE_ARRAY
                        : copier.sharedClass(e) && Modifier.isFinal(e.getModifiers()) ? SHALLOW_ARRAY : ARRAY;
                return new Layout(c, kind, none, null);
            }
            if (copier.sharedClass(c) || (copier.records && copier.immutable(c, 0))) {
                return new Layout(c, SHARE, none, null);
            }
            long[][] f = fields(c);
            // no state at all (a marker, a stateless function): nothing to copy
            int kind = f[0].length + f[1].length + f[2].length + f[3].length + f[4].length == 0 ? SHARE : COPY;
            return new Layout(c, kind, f, moduleOf(c));
        }
    }

    private Layout layout(Class<?> c) {
        return layouts.get(c);
    }

    /** Copy every instance field of ``src`` into ``dst`` (objects of the same class), except the reference
     *  fields at the offsets in ``skip``: a family whose live object must stay the one Python holds (a py4j
     *  proxy's target) copies a fresh copy's fields into it. */
    public void copyFields(Object src, Object dst, long... skip) {
        if (src.getClass() != dst.getClass()) throw new IllegalArgumentException("S1DeepCopy.copyFields: "
                + src.getClass().getName() + " into " + dst.getClass().getName());
        long[][] f = FIELDS.get(src.getClass());
        for (long off : f[1]) U.putLong(dst, off, U.getLong(src, off));
        for (long off : f[2]) U.putInt(dst, off, U.getInt(src, off));
        for (long off : f[3]) U.putShort(dst, off, U.getShort(src, off));
        for (long off : f[4]) U.putByte(dst, off, U.getByte(src, off));
        outer:
        for (long off : f[0]) {
            for (long s : skip) if (s == off) continue outer;
            U.putObject(dst, off, U.getObject(src, off));
        }
    }

    private static final ClassValue<long[][]> FIELDS = new ClassValue<long[][]>() {
        @Override
        protected long[][] computeValue(Class<?> c) {
            return fields(c);
        }
    };

    /** The instance field offsets of ``c``: reference, 8-, 4-, 2- and 1-byte fields. */
    static long[][] fields(Class<?> c) {
        List<Long> r = new ArrayList<>(), lo = new ArrayList<>(), in = new ArrayList<>(),
                sh = new ArrayList<>(), by = new ArrayList<>();
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
        return new long[][] {unbox(r), unbox(lo), unbox(in), unbox(sh), unbox(by)};
    }

    private static long[] unbox(List<Long> xs) {
        long[] out = new long[xs.size()];
        for (int k = 0; k < out.length; k++) out[k] = xs.get(k);
        return out;
    }

    /** Values nothing changes (and the JVM's own machinery): shared by the original and its copies. */
    boolean sharedClass(Class<?> c) {
        return c == String.class || c == Class.class || c.isEnum() || c == Boolean.class || c == Character.class
                || c == Integer.class || c == Long.class || c == Double.class || c == Float.class
                || c == Short.class || c == Byte.class || java.lang.ref.Reference.class.isAssignableFrom(c)
                || Thread.class.isAssignableFrom(c) || ClassLoader.class.isAssignableFrom(c) || hidden(c)
                || (sharing != null && sharing.shares(c));
    }

    /** A hidden or VM-anonymous class (a lambda's, say: Unsafe gives no field offsets in them): its name holds
     *  a '/', which no other class name does (Class.isHidden needs Java 15, and TWX runs on Java 11 too). */
    private static boolean hidden(Class<?> c) {
        return c.getName().indexOf('/') >= 0;
    }

    /** Records nothing can change: every field final and of a primitive, shared or (so) immutable type
     *  (TWX's ActionHistory and GameScore: the history grows with every move, so sharing it matters). */
    boolean immutable(Class<?> c, int depth) {
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
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // not a Scala object
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------ copies
    /** A deep copy of everything ``root`` reaches (sharing and cycles kept; the ``shared`` objects are kept
     *  as they are, as ScienceWorld keeps its interface's task definitions). */
    public Object copy(Object root, Object... shared) throws InstantiationException {
        return run(root, shared, NO_PLAN);
    }

    /** A deep copy of ``root`` as :meth:`copy` makes it (:meth:`Plan.takeFirst`), and the plan that copies
     *  ``root`` again (:meth:`Plan.copy`) while nothing changes ``root``'s graph. */
    public Plan planned(Object root, Object... shared) throws InstantiationException {
        return (Plan) run(root, shared, PLAN_ORIGINAL);
    }

    /** A deep copy of ``root`` (:meth:`Plan.root`) and the plan that copies that copy again (:meth:`Plan.copy`)
     *  while nothing changes it: a snapshot taken of a live object, planned as it is taken. */
    public Plan copied(Object root, Object... shared) throws InstantiationException {
        return (Plan) run(root, shared, PLAN_COPY);
    }

    private static final int NO_PLAN = 0, PLAN_ORIGINAL = 1, PLAN_COPY = 2;

    /** The tables of the last copy, emptied and used again by the next (one copy at a time per copier). */
    private Walk scratch;

    private synchronized Object run(Object root, Object[] shared, int plan) throws InstantiationException {
        Walk w = scratch != null ? scratch : new Walk(this);
        scratch = null;
        try {
            for (int attempt = 0; ; attempt++) {
                long before = byAddress ? collections() : 0;
                w.record = plan != NO_PLAN;
                Object copy = w.walk(root, shared);
                if (!byAddress || collections() == before) {
                    return plan == NO_PLAN ? copy : new Plan(w, root, copy, plan == PLAN_COPY);
                }
                w.clear();
                if (attempt >= ATTEMPTS) {
                    throw new IllegalStateException("S1DeepCopy: collections kept interrupting a copy");
                }
            }
        } finally {
            w.clear();
            scratch = w;
        }
    }

    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean gc : COLLECTORS) n += gc.getCollectionCount();
        return n;
    }

    /**
     * One copy, breadth first: each original gets an index when first reached (its copy made then), and the
     * objects are filled in index order, so the walk needs no stack and a plan's reference targets, recorded in
     * that order, need no offsets. The table maps an original to its index (open addressing, keyed by address
     * or identity hash; only the slots used are emptied after a copy).
     */
    private static final class Walk {
        final S1DeepCopy copier;
        final boolean byAddress;
        boolean record;
        Object[] keys = new Object[1 << 11];
        int[] vals = new int[1 << 11];
        int used;
        /** by index: the original, its copy, its layout, its slot in the table */
        Object[] originals = new Object[1 << 10];
        Object[] copies = new Object[1 << 10];
        Layout[] kinds = new Layout[1 << 10];
        int[] slotOf = new int[1 << 10];
        int count;
        /** the table's slots of the objects kept as they are (``shared``) */
        int[] sharedSlots = new int[4];
        int sharedCount;
        /** with a plan: each reference field's (array element's) target in index order: an index, or SAME */
        int[] targets = new int[1 << 11];
        int slots;
        final Object[] holder = new Object[1];

        Walk(S1DeepCopy copier) {
            this.copier = copier;
            this.byAddress = copier.byAddress;
        }

        /** Empty again, holding no object. */
        void clear() {
            for (int k = 0; k < count; k++) keys[slotOf[k]] = null;
            for (int k = 0; k < sharedCount; k++) keys[sharedSlots[k]] = null;
            Arrays.fill(originals, 0, count, null);
            Arrays.fill(copies, 0, count, null);
            Arrays.fill(kinds, 0, count, null);
            used = count = slots = sharedCount = 0;
        }

        Object walk(Object root, Object[] shared) throws InstantiationException {
            if (shared != null) for (Object s : shared) if (s != null) keep(s);
            int r = indexOf(root);
            for (int k = 0; k < count; k++) {
                Layout l = kinds[k];
                if (l.kind == Layout.COPY) {
                    Object src = originals[k], dst = copies[k];
                    copyPrimitives(l, src, dst);
                    for (long off : l.refs) {
                        Object v = U.getObject(src, off);
                        int t = indexOf(v);
                        if (t >= 0) U.putObject(dst, off, copies[t]);
                        else if (v != null) U.putObject(dst, off, v);
                        if (record) target(t);
                    }
                } else if (l.kind == Layout.ARRAY) {
                    Object[] a = (Object[]) originals[k], b = (Object[]) copies[k];  // b started as a clone
                    for (int i = 0; i < a.length; i++) {
                        int t = indexOf(a[i]);
                        if (t >= 0) b[i] = copies[t];
                        if (record) target(t);
                    }
                }
            }
            return r >= 0 ? copies[r] : root;
        }

        private void target(int t) {
            if (slots == targets.length) targets = Arrays.copyOf(targets, slots * 2);
            targets[slots++] = t;
        }

        /** ``o``'s index (its copy made now if it has none yet), or SAME when ``o`` is null or kept as it is. */
        private int indexOf(Object o) throws InstantiationException {
            if (o == null) return SAME;
            Layout l = copier.layout(o.getClass());
            if (l.kind == Layout.SHARE || l.module == o) return SAME;
            int mask = keys.length - 1;
            int s = slot(hash(o), mask);
            for (Object key; (key = keys[s]) != null; s = (s + 1) & mask) {
                if (key == o) return vals[s];
            }
            Object copy;
            switch (l.kind) {
                case Layout.PRIMITIVE_ARRAY: copy = primitiveClone(o); break;
                case Layout.SHALLOW_ARRAY:
                case Layout.ARRAY: copy = ((Object[]) o).clone(); break;
                default: copy = U.allocateInstance(l.type);
            }
            if (count == originals.length) {
                int n = count * 2;
                originals = Arrays.copyOf(originals, n);
                copies = Arrays.copyOf(copies, n);
                kinds = Arrays.copyOf(kinds, n);
                slotOf = Arrays.copyOf(slotOf, n);
            }
            int k = count++;
            originals[k] = o;
            copies[k] = copy;
            kinds[k] = l;
            slotOf[k] = s;
            keys[s] = o;
            vals[s] = k;
            if (++used * 2 > keys.length) grow();
            return k;
        }

        /** ``o`` kept as it is by this copy (its index SAME). */
        private void keep(Object o) {
            int mask = keys.length - 1;
            int s = slot(hash(o), mask);
            for (Object key; (key = keys[s]) != null; s = (s + 1) & mask) {
                if (key == o) return;
            }
            keys[s] = o;
            vals[s] = SAME;
            if (sharedCount == sharedSlots.length) sharedSlots = Arrays.copyOf(sharedSlots, sharedCount * 2);
            sharedSlots[sharedCount++] = s;
            if (++used * 2 > keys.length) grow();
        }

        /** Twice the table, every entry placed again (and its slot noted again). */
        private void grow() {
            Object[] ks = keys;
            int[] vs = vals;
            keys = new Object[ks.length * 2];
            vals = new int[ks.length * 2];
            int mask = keys.length - 1;
            sharedCount = 0;
            for (int i = 0; i < ks.length; i++) {
                Object o = ks[i];
                if (o == null) continue;
                int s = slot(hash(o), mask);
                while (keys[s] != null) s = (s + 1) & mask;
                keys[s] = o;
                vals[s] = vs[i];
                if (vs[i] >= 0) {
                    slotOf[vs[i]] = s;
                } else {
                    if (sharedCount == sharedSlots.length) sharedSlots = Arrays.copyOf(sharedSlots, sharedCount * 2);
                    sharedSlots[sharedCount++] = s;
                }
            }
        }

        /** ``o``'s address (compressed or not) while nothing moves, or its identity hash. */
        private long hash(Object o) {
            if (!byAddress) return System.identityHashCode(o);
            holder[0] = o;
            long a = COMPRESSED ? (U.getInt(holder, ARRAY_BASE) & 0xffffffffL) : U.getLong(holder, ARRAY_BASE);
            holder[0] = null;
            return a;
        }

        private static int slot(long a, int mask) {
            long h = a * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32)) & mask;
        }
    }

    static Object primitiveClone(Object o) {
        if (o instanceof int[]) return ((int[]) o).clone();
        if (o instanceof boolean[]) return ((boolean[]) o).clone();
        if (o instanceof double[]) return ((double[]) o).clone();
        if (o instanceof long[]) return ((long[]) o).clone();
        if (o instanceof char[]) return ((char[]) o).clone();
        if (o instanceof byte[]) return ((byte[]) o).clone();
        if (o instanceof float[]) return ((float[]) o).clone();
        return ((short[]) o).clone();
    }

    // ------------------------------------------------------------------------------------------- plans
    /** A copy compiled once (see the file's comment): :meth:`copy` makes the graph's copy again from arrays. */
    public static final class Plan {
        private final Object root;
        /** A copy of ``root`` made while planning, handed out once (:meth:`takeFirst`), or null. */
        private Object first;
        /** the graph's objects in index order (the root first), and their layouts */
        private final Object[] originals;
        private final Layout[] kinds;
        /** each reference field's (array element's) target, in index order: its index, or SAME (the field's
         *  value in the graph: null or an object kept as it is) */
        private final int[] targets;

        private Plan(Walk w, Object original, Object copy, boolean ofCopy) {
            int n = w.count;
            root = ofCopy ? copy : original;
            first = ofCopy ? null : copy;
            originals = Arrays.copyOf(ofCopy ? w.copies : w.originals, n);
            kinds = Arrays.copyOf(w.kinds, n);
            targets = Arrays.copyOf(w.targets, w.slots);
        }

        /** The graph this plan copies. */
        public Object root() {
            return root;
        }

        /** The objects a copy makes. */
        public int objects() {
            return originals.length;
        }

        /** The copy made while planning, the first time; after that (and for a plan of a copy) null. */
        public Object takeFirst() {
            Object out = first;
            first = null;
            return out;
        }

        /** A fresh deep copy of the planned graph (the same copy :meth:`S1DeepCopy.copy` would make). */
        public Object copy() throws InstantiationException {
            int n = originals.length;
            if (n == 0) return root;  // kept as it is, or null
            Object[] copies = new Object[n];
            for (int k = 0; k < n; k++) {
                Layout l = kinds[k];
                Object o = originals[k];
                switch (l.kind) {
                    case Layout.PRIMITIVE_ARRAY: copies[k] = primitiveClone(o); break;
                    case Layout.SHALLOW_ARRAY:
                    case Layout.ARRAY: copies[k] = ((Object[]) o).clone(); break;  // an ARRAY's copies set below
                    default: copies[k] = U.allocateInstance(l.type);
                }
            }
            int s = 0;
            for (int k = 0; k < n; k++) {
                Layout l = kinds[k];
                if (l.kind == Layout.COPY) {
                    Object src = originals[k], dst = copies[k];
                    copyPrimitives(l, src, dst);
                    for (long off : l.refs) {
                        int t = targets[s++];
                        U.putObject(dst, off, t >= 0 ? copies[t] : U.getObject(src, off));
                    }
                } else if (l.kind == Layout.ARRAY) {
                    Object[] b = (Object[]) copies[k];
                    for (int i = 0; i < b.length; i++) {
                        int t = targets[s++];
                        if (t >= 0) b[i] = copies[t];
                    }
                }
            }
            return copies[0];
        }
    }
}
