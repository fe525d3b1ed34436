"""ALFWorld-v0 on the real alfworld engine: shipped scenes, data errors, forks, experts, shared valid_seen games."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("alfworld", reason="the optional extra alfworld==0.4.2 is not installed")

import s1gym  # noqa: F401
from s1gym.tasks.alfworld.env import TASK_TYPES, ALFWorldEnv, find_games

SHARED = Path(os.environ.get("S1GYM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
ALFWORLD_SHARED = SHARED / "alfworld"
needs_shared = pytest.mark.skipif(
    not (ALFWORLD_SHARED / "json_2.1.1" / "valid_seen").is_dir(),
    reason=f"shared ALFWorld data not found at {ALFWORLD_SHARED} (set S1GYM_SHARED_DATA)",
)
#: One of the 7 valid_seen games the handcoded expert cannot win (SOURCE.md); the planner can (fast one).
PLANNER_ONLY = "pick_two_obj_and_place-CD-None-Drawer-304/trial_T20190907_230232_832893"


def play_expert(env: ALFWorldEnv, seed: int = 0) -> dict:
    _, info = env.reset(seed=seed)
    while not env.done:
        _, _, _, _, info = env.step(env.index_of(env.expert_action()))
    return info


@pytest.fixture(scope="module")
def env():
    # every admissible command on offer (hygiene off): these tests compare with the raw engine and play the
    # expert, whose look/examine moves hygiene hides
    e = gym.make("s1/ALFWorld-v0", hygiene=False)
    yield e
    e.close()


def test_default_plays_the_shipped_scenes_one_per_task_type(env):
    assert env.split == "scenes" and len(env.games) == 6
    types = set()
    for seed in range(6):
        _, info = env.reset(seed=seed)
        types.add(info["task_type"])
    assert types == set(TASK_TYPES)


def test_observation_is_markov_and_score_is_binary(env):
    obs, info = env.reset(seed=1)
    assert "Your task is to:" in obs and "Looking quickly around you" in obs
    assert "You are carrying nothing." in obs and info["score"] == 0.0
    env.step(env.index_of("go to toilet 1"))
    obs, *_ = env.step(env.index_of("take soapbar 1 from toilet 1"))
    assert (
        "You are at toilet 1." in obs and "You are carrying soapbar 1." in obs and "Your task is to:" in obs
    )


RAW_SCRIPT = """
import json, sys, textworld
game, moves = sys.argv[1], json.loads(sys.argv[2])  # read first: textworld's PDDL translation rewrites sys.argv
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
from textworld.envs.pddl import PddlEnv
env = AlfredDemangler(PddlEnv(textworld.EnvInfos(won=True, admissible_commands=True)), shuffle=False)
env.load(game)
state = env.reset()
out = [[state["feedback"], state["admissible_commands"]]]
for move in moves:
    state, _, _ = env.step(move)
    out.append([state["feedback"], state["admissible_commands"]])
print(json.dumps(out))
"""


def test_same_text_and_moves_as_the_unpatched_raw_engine(env):
    """s1gym memoises textworld's parsing and restores snapshots; a raw engine in a fresh process must agree."""
    import json
    import subprocess
    import sys

    _, info = env.reset(seed=0, options={"game": "pick_cool"})
    moves = [
        "go to fridge 1",
        "open fridge 1",
        "go to diningtable 1",
        "take apple 1 from diningtable 1",
        "go to fridge 1",
        "cool apple 1 with fridge 1",
        "examine apple 1",
        "go to countertop 1",
    ]
    gamefile = env.games[info["game"]]
    ours, feedback, player = [info["candidates"]], [], env
    for i, move in enumerate(moves):
        if i == 3:  # go on in a fork of a fork, so snapshot restores are covered too
            player = player.fork().fork()
        _, _, _, _, info = player.step(player.index_of(move))
        ours.append(info["candidates"])
        feedback.append(player.history[-1][1])
    out = subprocess.run(
        [sys.executable, "-c", RAW_SCRIPT, gamefile, json.dumps(moves)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    raw = json.loads(out.stdout.strip().splitlines()[-1])
    assert [r[1] for r in raw] == ours
    assert [r[0] for r in raw[1:]] == feedback


def test_expert_wins_every_shipped_scene(env):
    for seed in range(len(env.games)):
        info = play_expert(env, seed)
        assert info["won"] and info["score"] == 1.0, env.games[seed]


def test_planner_expert_wins_a_shipped_scene():
    e = gym.make("s1/ALFWorld-v0", expert="planner", game=3)
    try:
        info = play_expert(e)
        assert info["won"] and e.steps <= 8  # the planner is omniscient: a short plan
    finally:
        e.close()


def test_hygiene_is_on_by_default_and_drops_examine_look_inventory_help():
    """On by default: every shipped ALFWorld model was fitted with it (issue 40)."""
    e, raw = gym.make("s1/ALFWorld-v0"), gym.make("s1/ALFWorld-v0", hygiene=False)
    try:
        assert e.unwrapped.hygiene is True
        _, info = e.reset(seed=0)
        _, raw_info = raw.reset(seed=0)
        every = raw_info["candidates"]
        dropped = [c for c in every if c.split()[0] in ("examine", "look", "inventory", "help")]
        assert dropped and info["candidates"] == [c for c in every if c not in dropped]
    finally:
        e.close()
        raw.close()


def test_rule_plays_under_hygiene():
    """The expert's look/examine are hidden by hygiene; Rule still wins every shipped scene."""
    from s1gym.policies import Rule

    e = gym.make("s1/ALFWorld-v0", hygiene=True)
    rule = Rule()
    try:
        for seed in range(6):
            e.reset(seed=seed)
            while not e.done:
                e.step(rule.decide(e.situation()).action)
            assert e.won, f"Rule lost shipped scene {seed} under hygiene"
    finally:
        e.close()



def test_expert_action_is_a_candidate_under_the_default_hygiene():
    """``expert_action()`` names a candidate under the env's own options: played by index with hygiene on (the
    default), it wins every shipped scene and never raises, though the engine's expert asks for moves
    hygiene hides on the way (``engine_expert_action()``); Rule plays the same moves."""
    from s1gym.tasks.alfworld.expert import ExpertLost

    e = gym.make("s1/ALFWorld-v0").unwrapped
    try:
        hidden = 0
        for seed in range(6):
            e.reset(seed=seed)
            while not e.done:
                hidden += e.engine_expert_action() not in e.candidates
                move = e.expert_action()
                assert e.rule_action() == e.expert_move() == move  # one expert move, asked thrice
                e.step(e.index_of(move))
            assert e.won, f"the expert lost shipped scene {seed} under hygiene"
        assert hidden, "no scene had the engine's expert ask for a hidden move: the test proves nothing"
        with pytest.raises(ExpertLost, match="the game is over"):
            e.expert_action()
        assert e.expert_move() is None
    finally:
        e.close()

def test_seed_stride_and_game_pick_games_deterministically():
    e = gym.make("s1/ALFWorld-v0", stride=5)
    try:
        picked = [e.reset(seed=s)[1]["game"] for s in range(4)]
        assert picked == [(s * 5) % 6 for s in range(4)]
        assert (
            e.reset(seed=0, options={"game": "pick_cool"})[1]["task_type"] == "pick_cool_then_place_in_recep"
        )
    finally:
        e.close()
    with pytest.raises(ValueError, match="outside"):
        gym.make("s1/ALFWorld-v0", game=99)


def test_missing_data_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="alfworld-download"):
        gym.make("s1/ALFWorld-v0", data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="ALFWORLD_DATA"):
        find_games(str(tmp_path), "valid_unseen")


def test_fork_restores_the_state_without_replay(env):
    env.reset(seed=0, options={"game": "pick_heat"})
    for move in ("go to fridge 1", "open fridge 1", "take egg 1 from fridge 1"):
        env.step(env.index_of(move))
    fork = env.fork()
    for move in ("go to microwave 1", "heat egg 1 with microwave 1"):
        env.step(env.index_of(move))
    assert fork.situation().observation != env.situation().observation
    # The fork was never stepped; stepping it restores the snapshot into a pooled engine.
    obs, *_ = fork.step(fork.index_of("go to diningtable 1"))
    assert "You are carrying egg 1." in obs and fork.expert_action() in fork.candidates
    fork.close()


def test_search_with_lookahead_steps_each_child_once_and_decides_the_same():
    """Lookahead reads the children Search just stepped from the pool's transition cache: the same decisions,
    each with the same probabilities, and fewer engine steps than with the cache off."""
    from s1gym.engines.base import pool_stats
    from s1gym.policies import Local
    from s1gym.engines.transitions import TransitionCache
    from s1gym.wrappers import Lookahead, Search

    def play(capacity: int) -> tuple[list, int, int]:
        e = gym.make("s1/ALFWorld-v0", hygiene=True, expert=None).unwrapped
        e.reset(seed=0)
        # this capacity on the pool's engines as they are (closing the pool would reload libdownward, which
        # a process can do only so often: see close_engines)
        e._pool().transitions = TransitionCache(capacity)
        before = pool_stats()[("alfworld", False)]["steps"]
        decisions = []
        for seed in (0, 4):
            search = Search(Lookahead(Local(preload=False)), heuristic="progress", budget=10, episode_budget=150)
            e.reset(seed=seed)
            while not e.done:
                d = search.decide(e.situation())
                decisions.append((d.action, d.probabilities.tolist(), d.info["policy_calls"]))
                e.step(d.action)
            assert e.won
        e.close()
        stats = pool_stats()[("alfworld", False)]
        return decisions, stats["steps"] - before, stats["transition_hits"]

    off, steps_off, hits_off = play(0)
    on, steps_on, hits_on = play(1024)
    assert on == off and hits_off == 0
    assert hits_on > 0 and steps_on == steps_off - hits_on and steps_on < 0.75 * steps_off


def test_lookahead_local_leaves_the_loop_that_the_revisits_show():
    """Scene 0 (look at a book under the desklamp): without its ``revisits`` weight the shipped model switches
    the lamp on and off for ever (each candidate's count shows it); with it, it moves on and wins."""
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    e = gym.make("s1/ALFWorld-v0", hygiene=True, expert=None).unwrapped

    def play(local: Local, moves: int) -> tuple[list[str], list[int]]:
        policy = Lookahead(local)
        e.reset(seed=0)
        played, counts = [], []
        while not e.done and len(played) < moves:
            situation = e.situation()
            d = policy.decide(situation)
            shown = {c.text: c.revisits for c in policy.annotate(situation)[0].candidates}
            played.append(situation.texts[d.action])
            counts.append(shown[played[-1]])
            e.step(d.action)
        return played, counts

    looping, counts = play(Local(preload=False, weights={"revisits": 0.0}), 12)
    assert not e.won and max(counts) >= 3, (looping, counts)  # at the time of writing: the lamp, 11 times
    played, counts = play(Local(preload=False), 50)
    assert e.won and max(counts) == 0, (played, counts)
    e.close()


def test_close_engines_unloads_the_pool_and_envs_recover():
    from s1gym.tasks.alfworld.engine import close_engines
    from s1gym.engines.base import pool_stats

    e = gym.make("s1/ALFWorld-v0")
    e.reset(seed=1)
    e.step(e.index_of("go to toilet 1"))
    twin = e.fork()
    close_engines()
    assert not any(k[0] == "alfworld" for k in pool_stats() if isinstance(k, tuple))
    a, b = (
        e.step(e.index_of("take soapbar 1 from toilet 1")),
        twin.step(twin.index_of("take soapbar 1 from toilet 1")),
    )
    assert a[0] == b[0] and "You are carrying soapbar 1." in a[0]
    e.close()
    twin.close()


def test_closing_an_engine_keeps_its_library_and_the_interpreter_exits_cleanly():
    """Unloading a second libdownward copy left dangling entries in the library's process-wide plugin
    registry and the interpreter's exit crashed (SIGSEGV). A closed engine's copy now serves the next engine."""
    script = (
        "from s1gym.tasks.alfworld.engine import ALFEngine, _SPARE_LIBRARIES\n"
        "first, second = ALFEngine(facts=False), ALFEngine(facts=False)\n"
        "lib = second.pddl.downward_lib\n"
        "second.close()\n"
        "assert first.alive() and not second.alive()\n"
        "assert ALFEngine(facts=False).pddl.downward_lib is lib and not _SPARE_LIBRARIES\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


PROPERTY = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(
    seed=st.integers(0, 5),
    prefix=st.lists(st.integers(0, 100), max_size=8),
    rest=st.lists(st.integers(0, 100), min_size=1, max_size=5),
)
def test_fork_matches_replay_from_scratch(seed, prefix, rest):
    """A fork (snapshot restore) behaves exactly like a fresh env that replays the same moves."""
    a = gym.make("s1/ALFWorld-v0")
    b = gym.make("s1/ALFWorld-v0")
    try:
        a.reset(seed=seed)
        moves = []
        for c in prefix:
            if a.done:
                return
            move = a.candidates[c % len(a.candidates)]
            moves.append(move)
            a.step(a.index_of(move))
        fork = a.fork()
        a.step(0)  # move the parent's engine away
        b.reset(seed=seed)
        for move in moves:
            b.step(b.index_of(move))
        for c in rest:
            if fork.done:
                break
            i = c % len(fork.candidates)
            ra, rb = fork.step(i), b.step(i)
            assert ra[0] == rb[0] and ra[1:4] == rb[1:4] and ra[4]["candidates"] == rb[4]["candidates"]
            assert fork.state_key() == b.state_key()
            # the expert's state forks too: the engine's expert and the candidate it leads to agree
            assert fork.engine_expert_action() == b.engine_expert_action()
            assert fork.expert_move() == b.expert_move()
    finally:
        a.close()
        b.close()


@pytest.fixture(scope="module")
def lone_engine():
    """An engine outside the pool, with a state registry of its own (one for the module; closing it parks its
    libdownward copy for the next engine)."""
    from s1gym.tasks.alfworld.engine import ALFEngine

    engine = ALFEngine(facts=False)
    yield engine
    engine.close()


@PROPERTY
@given(seed=st.integers(0, 5), walk=st.lists(st.integers(0, 100), min_size=1, max_size=10))
def test_followed_state_vectors_and_restores_by_id_are_the_librarys_own(lone_engine, seed, walk):
    """The state vector the engine follows move by move is the library's (``get_state``), and a restore by the
    library's state-registry id leaves the engine exactly where a full reload of the task with the snapshot's
    vector (``load_sas``) does."""
    e = gym.make("s1/ALFWorld-v0", expert=None).unwrapped
    try:
        e.reset(seed=seed)
        engine = e.engine()
        snaps = [engine.snapshot()]
        for c in walk:
            if e.done:
                break
            e.step(c % len(e.candidates))
            engine = e.engine()
            snaps.append(engine.snapshot())
            assert snaps[-1].values == library_state(engine)
        assert all(s.registered is not None for s in snaps)
        other = lone_engine  # a registry of its own: only a reload can restore there
        for snap in reversed(snaps):
            assert snap.registered[0] is engine._registry  # restored by id, not reloaded
            engine.restore(e._gamefile, snap)
            other.restore(e._gamefile, snap)
            for a in (engine, other):
                assert a._state_values() == snap.values
                assert a.pddl.downward_lib.get_applicable_operators_count() == len(snap.derived[1])
            move = engine.state["admissible_commands"][0]
            assert engine.step(move).state["feedback"] == other.step(move).state["feedback"]
            assert engine.state["admissible_commands"] == other.state["admissible_commands"]
    finally:
        e.close()


def test_a_conditional_effect_reaches_the_state_key_and_a_restore_elsewhere(env, lone_engine):
    """``use desklamp`` is a conditional effect (on if off, off if on); textworld's fact sets take both branches
    and keep the lamp off, so a state vector read from them would miss it. The key and a restore into another
    engine must see the lamp on."""
    env.reset(seed=0, options={"game": "look_at"})
    places = [m for m in env.candidates if m.startswith("go to ")]
    lamp = next(m for m in places if any(c.startswith("use ") for c in env.fork().step_move(m)[4]["candidates"]))
    env.step(env.index_of(lamp))
    toggle = next(m for m in env.candidates if m.startswith("use "))
    env.step(env.index_of(toggle))
    snap = env.engine().snapshot()
    assert snap.values == library_state(env.engine())
    lone_engine.restore(env.unwrapped._gamefile, snap)
    assert library_state(lone_engine) == snap.values


def library_state(engine) -> str:
    """The state vector as the library reports it, one name per variable (0: its atom holds, else 1)."""
    from fast_downward import Atom

    lib = engine.pddl.downward_lib
    atoms = (Atom * lib.get_state_size())()
    lib.get_state(atoms)
    return "\n".join("0" if a.name.startswith("Atom ") else "1" for a in atoms)


@pytest.fixture(scope="module")
def shared_games():
    return find_games(str(ALFWORLD_SHARED), "valid_seen")


@needs_shared
def test_shared_valid_seen_has_140_games(shared_games):
    assert len(shared_games) == 140


@needs_shared
@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("game", [0, 35, 70, 105])
def test_handcoded_expert_wins_shared_games(game):
    e = gym.make("s1/ALFWorld-v0", data_dir=ALFWORLD_SHARED, split="valid_seen", game=game, max_steps=200,
                 hygiene=False)
    try:
        assert play_expert(e)["won"], e.games[game]
    finally:
        e.close()


@needs_shared
@pytest.mark.shared
def test_planner_expert_wins_a_game_the_handcoded_expert_cannot():
    e = gym.make(
        "s1/ALFWorld-v0", data_dir=ALFWORLD_SHARED, split="valid_seen", game=PLANNER_ONLY, expert="planner"
    )
    try:
        assert play_expert(e)["won"]
    finally:
        e.close()


def test_planner_plans_once_and_forks_keep_their_plan():
    """Following the planner's plan needs no new search; a fork taken mid-plan still follows it to a win."""
    e = gym.make("s1/ALFWorld-v0", expert="planner", game=3)
    try:
        e.reset(seed=0)
        first = e.expert_action()
        plan = e.unwrapped._plan_cache[1]
        moves_before = e.unwrapped.game_state.moves
        e.step(e.index_of(first))
        fork = e.fork()
        assert e.unwrapped._plan_cache == ((*moves_before, first), plan[1:])  # the rest, not a new search
        e.step(e.index_of(next(c for c in e.candidates if c != plan[1])))  # the parent leaves the plan
        assert e.expert_action() in e.candidates  # ... and replans
        while not fork.done:
            fork.step(fork.index_of(fork.expert_action()))
        assert fork.won and fork.steps == len(plan)
        fork.close()
    finally:
        e.close()
