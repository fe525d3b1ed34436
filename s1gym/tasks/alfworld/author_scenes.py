"""Author the small ALFWorld scenes that s1gym ships (run: ``python -m s1gym.tasks.alfworld.author_scenes``).

Why: the real ALFWorld games (json_2.1.1) are a separate download, but the
env must work anywhere (tests, ``gym.make("s1/ALFWorld-v0")`` with defaults).
So we write a few tiny rooms of our own, one per ALFWorld task type, in
ALFWorld's own input format (``traj_data.json`` + ``initial_state.pddl``), and
then let ALFWorld's own ``alfworld-generate`` build ``game.tw-pddl`` from them
(with its handcoded expert checking they are solvable)::

    python -m s1gym.tasks.alfworld.author_scenes /tmp/scenes_in
    alfworld-generate --data_path /tmp/scenes_in/scenes --save_path s1gym/tasks/alfworld/data/json_2.1.1/scenes \
        --domain <site-packages>/alfworld/data/alfred.pddl --grammar <site-packages>/alfworld/data/alfred.twl2 \
        --end 1000
    # alfworld-generate copies traj_data.json; copy each initial_state.pddl next to its game.tw-pddl

The scenes are authored here (no ALFRED data is copied); object and
receptacle classes are ALFRED's (``alfworld.gen.constants``). The note each ``traj_data.json`` carries names
this script by the path it had when the shipped scenes were written (s1gym/data/alfworld/), so that running it
again writes the same files.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Scene:
    name: str  # folder name: <task_type>-<Object>-None-<Parent>-<tag>
    task_type: str
    params: dict[str, str]
    # receptacle class -> (count, openable)
    receptacles: dict[str, tuple[int, bool]]
    # (object class, receptacle class, receptacle index 1.., properties)
    objects: list[tuple[str, str, int, tuple[str, ...]]] = field(default_factory=list)
    description: str = ""


SCENES = [
    Scene(
        "pick_and_place_simple-SoapBar-None-Cabinet-901",
        "pick_and_place_simple",
        {"object_target": "SoapBar", "parent_target": "Cabinet"},
        {"Cabinet": (2, True), "CounterTop": (1, False), "Toilet": (1, False), "GarbageCan": (1, False)},
        [("SoapBar", "Toilet", 1, ()), ("SprayBottle", "CounterTop", 1, ()), ("Candle", "Cabinet", 2, ())],
        "Put a bar of soap in a cabinet.",
    ),
    Scene(
        "look_at_obj_in_light-Book-None-DeskLamp-902",
        "look_at_obj_in_light",
        {"object_target": "Book", "toggle_target": "DeskLamp"},
        {"Bed": (1, False), "Desk": (1, False), "Drawer": (2, True), "SideTable": (1, False)},
        [
            ("Book", "Bed", 1, ()),
            ("DeskLamp", "SideTable", 1, ("toggleable",)),
            ("Pen", "Desk", 1, ()),
            ("CD", "Drawer", 1, ()),
        ],
        "Look at a book under the desk lamp.",
    ),
    Scene(
        "pick_clean_then_place_in_recep-Cloth-None-Shelf-903",
        "pick_clean_then_place_in_recep",
        {"object_target": "Cloth", "parent_target": "Shelf"},
        {"Sink": (1, False), "Shelf": (1, False), "CounterTop": (1, False), "Drawer": (1, True)},
        [("Cloth", "CounterTop", 1, ("cleanable",)), ("SoapBottle", "Shelf", 1, ())],
        "Put a clean cloth on the shelf.",
    ),
    Scene(
        "pick_heat_then_place_in_recep-Egg-None-DiningTable-904",
        "pick_heat_then_place_in_recep",
        {"object_target": "Egg", "parent_target": "DiningTable"},
        {"Microwave": (1, True), "DiningTable": (1, False), "Fridge": (1, True), "CounterTop": (1, False)},
        [
            ("Egg", "Fridge", 1, ("heatable", "coolable")),
            ("Mug", "CounterTop", 1, ("heatable", "coolable", "cleanable")),
        ],
        "Put a hot egg on the dining table.",
    ),
    Scene(
        "pick_cool_then_place_in_recep-Apple-None-CounterTop-905",
        "pick_cool_then_place_in_recep",
        {"object_target": "Apple", "parent_target": "CounterTop"},
        {"Fridge": (1, True), "CounterTop": (1, False), "DiningTable": (1, False), "Cabinet": (1, True)},
        [
            ("Apple", "DiningTable", 1, ("heatable", "coolable", "cleanable")),
            ("Bowl", "Cabinet", 1, ("heatable", "coolable", "cleanable")),
        ],
        "Put a cold apple on the counter.",
    ),
    Scene(
        "pick_two_obj_and_place-Pencil-None-Desk-906",
        "pick_two_obj_and_place",
        {"object_target": "Pencil", "parent_target": "Desk"},
        {"Desk": (1, False), "Drawer": (2, True), "Shelf": (1, False), "Bed": (1, False)},
        [("Pencil", "Shelf", 1, ()), ("Pencil", "Bed", 1, ()), ("KeyChain", "Drawer", 1, ())],
        "Put two pencils on the desk.",
    ),
]

# Receptacles that ALFWorld renders as basins (see alfworld's Demangler).
BASINS = {"Sink": "SinkBasin", "Bathtub": "BathtubBasin"}


def _id(cls: str, n: int, suffix: str = "") -> str:
    """An ALFRED-style id (``Class|+0n.00|+00.00|+00.00``, mangled) that alfworld's Demangler understands."""
    return f"{cls}_bar__plus_{n:02d}_dot_00_bar__plus_00_dot_00_bar__plus_00_dot_00" + (
        f"_bar_{suffix}" if suffix else ""
    )


def _goal(scene: Scene) -> str:
    p, t = scene.params.get("parent_target", ""), scene.task_type
    o = scene.params["object_target"]
    place = f"(receptacleType ?r {p}Type) (inReceptacle ?o ?r)"
    if t == "pick_and_place_simple":
        return f"(exists (?r - receptacle) (exists (?o - object) (and (objectType ?o {o}Type) {place})))"
    if t == "look_at_obj_in_light":
        lamp = scene.params["toggle_target"]
        return (
            f"(and (exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and (objectType ?ot {lamp}Type)"
            f" (toggleable ?ot) (isToggled ?ot) (receptacleAtLocation ?r ?l) (atLocation ?a ?l) (inReceptacle ?ot ?r)))"
            f" (exists (?o - object ?a - agent) (and (objectType ?o {o}Type) (holds ?a ?o))))"
        )
    for kind, able, is_ in (
        ("clean", "cleanable", "isClean"),
        ("heat", "heatable", "isHot"),
        ("cool", "coolable", "isCool"),
    ):
        if t == f"pick_{kind}_then_place_in_recep":
            return (
                f"(exists (?r - receptacle) (exists (?o - object) (and ({able} ?o) (objectType ?o {o}Type)"
                f" (receptacleType ?r {p}Type) ({is_} ?o) (inReceptacle ?o ?r))))"
            )
    if t == "pick_two_obj_and_place":
        return (
            f"(exists (?r - receptacle) (exists (?o1 - object) (and (objectType ?o1 {o}Type) (receptacleType ?r {p}Type)"
            f" (inReceptacle ?o1 ?r) (exists (?o2 - object) (and (not (= ?o1 ?o2)) (objectType ?o2 {o}Type)"
            f" (receptacleType ?r {p}Type) (inReceptacle ?o2 ?r))))))"
        )
    raise ValueError(t)


def problem(scene: Scene) -> str:
    from alfworld.gen import constants

    rtypes = sorted({BASINS.get(r, r) for r in scene.receptacles})
    otypes = sorted((set(constants.OBJECTS) | {o for o, *_ in scene.objects}) - set(rtypes))
    objs, recs, locs, init = [], {}, ["loc_bar_start"], ["(atLocation agent1 loc_bar_start)"]
    n = 0
    for cls, (count, openable) in scene.receptacles.items():
        for i in range(1, count + 1):
            n += 1
            rid = _id(cls, n, BASINS.get(cls, ""))
            rtype = BASINS.get(cls, cls)
            recs[(cls, i)] = rid
            loc = f"loc_bar_{n}"
            locs.append(loc)
            init += [f"(receptacleType {rid} {rtype}Type)", f"(receptacleAtLocation {rid} {loc})"]
            if openable:
                init.append(f"(openable {rid})")
            for ot in otypes:
                if ot in constants.VAL_RECEPTACLE_OBJECTS.get(rtype, ()) or any(
                    o == ot and r == cls for o, r, *_ in scene.objects
                ):
                    init.append(f"(canContain {rtype}Type {ot}Type)")
    for cls, rcls, ri, props in scene.objects:
        n += 1
        oid = _id(cls, n)
        objs.append(oid)
        rid = recs[(rcls, ri)]
        loc = next(line.split()[-1][:-1] for line in init if line.startswith(f"(receptacleAtLocation {rid} "))
        init += [
            f"(objectType {oid} {cls}Type)",
            f"(inReceptacle {oid} {rid})",
            f"(objectAtLocation {oid} {loc})",
        ]
        if cls != "DeskLamp":
            init.append(f"(pickupable {oid})")
        init += [f"({p} {oid})" for p in props]
    lines = [
        "(define (problem plan_s1gym_" + scene.name.split("-")[-1] + ")",
        "(:domain alfred)",
        "(:objects",
        "agent1 - agent",
    ]
    lines += [f"{o} - object" for o in otypes] + [f"{o}Type - otype" for o in otypes]
    lines += [f"{r}Type - rtype" for r in rtypes]
    lines += [f"{o} - object" for o in objs] + [f"{r} - receptacle" for r in recs.values()]
    lines += [f"{loc} - location" for loc in locs] + [")", "(:init"] + init + [")"]
    lines += [f"(:goal (and {_goal(scene)}))", ")"]
    return "\n".join(lines) + "\n"


def traj_data(scene: Scene) -> dict:
    params = {
        "mrecep_target": "",
        "object_sliced": False,
        "object_target": "",
        "parent_target": "",
        "toggle_target": "",
    }
    params.update(scene.params)
    return {
        "task_type": scene.task_type,
        "pddl_params": params,
        "turk_annotations": {"anns": [{"task_desc": scene.description, "high_descs": [], "votes": [1]}]},
        "task_id": "s1gym_" + scene.name.split("-")[-1],
        "note": "Authored for s1gym (s1gym/data/alfworld/author_scenes.py); not ALFRED data.",
    }


def main(out: str) -> None:
    for scene in SCENES:
        folder = Path(out) / "scenes" / scene.name / "trial_s1gym_0"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "initial_state.pddl").write_text(problem(scene))
        (folder / "traj_data.json").write_text(json.dumps(traj_data(scene), indent=1) + "\n")
        print(folder)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "scenes_in")
