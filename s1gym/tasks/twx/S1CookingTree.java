package s1gym.twx;

// CookingWorld's object tree as the s1gym expert's planner reads it (s1gym/tasks/twx/expert.py), built in the JVM.
//
// TWX's CookingWorldGame.getObjectTree() writes every object with its 26 fields (a 14 KB JSON in a medium
// game); the planner reads five things of it: where the player is, what it holds, where every object is (the
// rooms' contents, nested), whether each container is open or openable, and the recipe with the cut and cooked
// flags of the ingredients. This writes the same JSON shape (the same keys in the same order, objects keyed by
// name, contents nested) with only those fields, and only those that are true ("contents" only when not
// empty), so the planner reads either tree the same way (tests/test_twx_expert.py checks them field by field).
//
// Compiled with S1Snapshots.java (s1gym/tasks/twx/snapshots.py).

import scala.collection.mutable.ArrayBuffer;
import textworldexpress.data.RecipeIngredient;
import textworldexpress.games.CookingWorldGame;
import textworldexpress.objects.FastObject;
import textworldexpress.objects.Room;
import textworldexpress.runtime.PythonInterface;
import textworldexpress.struct.TextGame;

public final class S1CookingTree {
    private S1CookingTree() {}

    /** The planner's tree of ``pi``'s game (JSON), or null when the game is not CookingWorld. */
    public static String tree(PythonInterface pi) {
        S1Snapshots.noDelay();
        TextGame game = pi.game();
        if (!(game instanceof CookingWorldGame)) return null;
        CookingWorldGame g = (CookingWorldGame) game;
        StringBuilder out = new StringBuilder(2048);
        out.append("{\"player_location\":");
        string(out, g.agentLocation().name());
        out.append(",\"inventory\":");
        contents(out, g.agentInventory().contents());
        out.append(",\"locations\":{");
        Room[] rooms = g.locations();
        for (int k = 0; k < rooms.length; k++) {
            if (k > 0) out.append(',');
            string(out, rooms[k].name());
            out.append(':');
            object(out, rooms[k]);
        }
        out.append("},\"recipe\":[");
        ArrayBuffer<RecipeIngredient> recipe = g.recipe();
        for (int k = 0; k < recipe.length(); k++) {
            RecipeIngredient ing = recipe.apply(k);
            if (k > 0) out.append(',');
            out.append("{\"name\":");
            string(out, ing.name());
            out.append(",\"preparation\":");
            string(out, ing.preparation().mkString(", "));  // as TWX writes it (its order, its separator)
            out.append('}');
        }
        return out.append("]}").toString();
    }

    /**
     * ``pi.stepJSON(move)`` and then the planner's tree, in one round trip: the tree's length, a colon, the
     * tree, the step's JSON (s1gym asks for this after the expert read a tree from the same game object, so
     * a player that keeps leaving the expert's plan costs no round trip of its own for the next plan).
     */
    public static String step(PythonInterface pi, String move) {
        String raw = pi.stepJSON(move);
        String tree = tree(pi);
        return tree == null ? "0:" + raw : tree.length() + ":" + tree + raw;
    }

    private static void contents(StringBuilder out, ArrayBuffer<FastObject> objects) {
        out.append('{');
        for (int k = 0; k < objects.length(); k++) {
            FastObject o = objects.apply(k);
            if (k > 0) out.append(',');
            string(out, o.name());
            out.append(':');
            object(out, o);
        }
        out.append('}');
    }

    private static void object(StringBuilder out, FastObject o) {
        int start = out.length();
        out.append('{');
        flag(out, "isOpen", o.isOpen());
        flag(out, "isOpenable", o.isOpenable());
        flag(out, "isChopped", o.isChopped());
        flag(out, "isSliced", o.isSliced());
        flag(out, "isDiced", o.isDiced());
        flag(out, "isFried", o.isFried());
        flag(out, "isRoasted", o.isRoasted());
        flag(out, "isGrilled", o.isGrilled());
        if (o.contents().length() > 0) {
            if (out.length() > start + 1) out.append(',');
            out.append("\"contents\":");
            contents(out, o.contents());
        }
        out.append('}');
    }

    private static void flag(StringBuilder out, String name, boolean value) {
        if (!value) return;
        if (out.charAt(out.length() - 1) != '{') out.append(',');
        out.append('"').append(name).append("\":true");
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        out.append('"');
    }
}
