"""TextWorldExpress tasks (s1gym.tasks.twx.env) on the real JVM: options, seeds, caps, expert, fork, JVM sharing."""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s1gym  # noqa: F401  (registers the envs)
from s1gym.engines import jvm as _jvm
from s1gym.tasks.twx import env as twx

#: The main job's hard CookingWorld (scripts/main.sh)
HARD = {"num_locations": 11, "num_ingredients": 5, "num_distractors": 10, "include_doors": True}
OTHER_GAMES = ["CoinCollector", "TWC", "MapReader", "Arithmetic", "Sorting", "SimonSays", "PeckingOrder"]


def make(task: str = "CookingWorld", **options) -> twx.TWXEnv:
    return gym.make(f"s1/{task}-v0", **options)


def safe_random_walk(env: twx.TWXEnv, steps: int, rng: np.random.Generator) -> None:
    """Random moves that never lose (each is tried on a fork first) and never finish the game."""
    for _ in range(steps):
        order = rng.permutation(len(env.candidates))
        for i in order:
            probe = env.fork()
            probe.step(int(i))
            ok = not (probe.lost or probe.won)
            probe.close()
            if ok:
                env.step(int(i))
                break


def play_expert(env: twx.TWXEnv, limit: int = 200) -> None:
    for _ in range(limit):
        if env.done:
            return
        env.step(env.index_of(env.expert_action()))


# ------------------------------------------------------------------ options


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ("small", {"numLocations": 1, "numIngredients": 1, "numDistractorItems": 2, "includeDoors": 0}),
        ("medium", {"numLocations": 3, "numIngredients": 2, "numDistractorItems": 5, "includeDoors": 0}),
        ("large", {"numLocations": 6, "numIngredients": 3, "numDistractorItems": 5, "includeDoors": 0}),
    ],
)
def test_sizes_set_the_twx_parameters(size, expected):
    with make(size=size) as env:
        assert {k: env.game_params[k] for k in expected} == expected
        env.reset(seed=1)
        rooms = {c for c in env.candidates if c.startswith("move ")}
        assert (len(rooms) == 0) == (size == "small")


def test_explicit_options_override_the_size():
    with make(size="small", num_locations=4, include_doors=True, fold="dev", max_steps=7) as env:
        assert env.game_params["numLocations"] == 4 and env.game_params["includeDoors"] == 1
        assert env.game_params["numIngredients"] == 1
        assert env.max_steps == 7 and env.fold == "dev"
        env.reset(seed=3)
        assert env.step(0)[-1]["game_seed"] == 10003  # dev games are TWX seeds 10000-10999


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"size": "huge"}, r"size must be one of \['small', 'medium', 'large'\]"),
        ({"fold": "valid"}, r"fold must be one of \['train', 'dev', 'test'\]"),
        ({"num_locations": 12}, r"num_locations must be an integer in 1\.\.11"),
        ({"num_ingredients": 0}, r"num_ingredients must be an integer in 1\.\.5"),
        ({"include_doors": "yes"}, r"include_doors must be True or False"),
        ({"recipe": 3}, r"unknown option\(s\) \['recipe'\]; allowed options are"),
    ],
)
def test_bad_options_raise_clear_errors(options, message):
    with pytest.raises(ValueError, match=message):
        make(**options)


def test_other_games_take_their_own_options():
    with make("SimonSays", game_length=12, num_distractors=5) as env:
        env.reset(seed=0)
        assert env.action_space.n >= 12 + 5
        assert len(env.candidates) <= env.action_space.n
    with pytest.raises(ValueError, match=r"num_items must be an integer in 1\.\.4"):
        make("TWC", num_items=9)
    with pytest.raises(ValueError, match="unknown option"):
        make("Arithmetic", num_locations=3)
    for task in OTHER_GAMES:
        assert twx.TWXEnv.__subclasses__() and gym.spec(f"s1/{task}-v0")
        cls = s1gym.registration.env_class(f"s1/{task}-v0")
        assert "fold" in cls.option_help and "max_steps" in cls.option_help


# ------------------------------------------------------------------- seeds


def test_seed_207_medium_is_the_orange_bell_pepper_and_carrot_game():
    with make(size="medium") as env:
        env.reset(seed=207)
        for move in ("take cookbook", "read cookbook"):
            _, _, _, _, info = env.step(env.index_of(move))
        recipe = env.history[-1][1]
        assert "orange bell pepper" in recipe and "carrot" in recipe
        assert "chop the orange bell pepper" in recipe and "grill the carrot" in recipe
        assert info["game_seed"] == 207
        # The recipe is remembered once: reading it again changes neither the observation nor the state.
        key, obs = env.state_key(), env.situation().observation
        assert obs.count("You remember:") == 1 and "chop the orange bell pepper" in obs
        env.step(env.index_of("read cookbook"))
        assert env.state_key() == key and env.situation().observation.count("You remember:") == 1


def test_seeds_pick_fold_games_and_candidates_are_sorted():
    with make(size="small", fold="test") as env:
        _, info = env.reset(seed=1005)  # seed mod 1000 -> test game 20005
        assert info["game_seed"] == 20005
        assert list(env.candidates) == sorted(set(env.candidates))
        obs, _ = env.reset(seed=5)
        assert env.reset(seed=1005)[0] == obs


def test_observation_is_markov():
    with make(size="medium") as env:
        obs, _ = env.reset(seed=207)
        assert obs.startswith("Task: You are hungry!")
        obs, *_ = env.step(env.index_of("take cookbook"))
        assert "You take the cookbook." in obs and "a cookbook" in obs and "You are in the kitchen" in obs


# --------------------------------------------------------------------- caps


@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_candidate_cap_holds_on_item_hoarding_walks(size):
    """Taking everything inflates the candidates (put X in Y for every pair); the cap has headroom."""
    rng = np.random.default_rng(0)
    most = 0
    with make(size=size) as env:
        for seed in range(4):
            env.reset(seed=seed)
            for _ in range(60):
                if env.done:
                    break
                most = max(most, len(env.candidates))
                takes = [i for i, c in enumerate(env.candidates) if c.startswith("take ")]
                safe = [i for i, c in enumerate(env.candidates) if c.startswith(("take", "open", "move", "look"))]
                env.step(int(rng.choice(takes if takes and rng.random() < 0.7 else safe)))
        assert most <= env.action_space.n


# ------------------------------------------------------------------ expert


@pytest.mark.parametrize(("size", "seeds"), [("medium", [207, 3]), ("large", [1, 42])])
def test_expert_wins_from_the_start(size, seeds):
    with make(size=size) as env:
        for seed in seeds:
            env.reset(seed=seed)
            play_expert(env)
            assert env.won, f"{size} seed {seed}: expert did not win; history {env.history}"


@pytest.mark.parametrize(("size", "seed", "k"), [("medium", 207, 6), ("medium", 11, 10), ("large", 5, 8), ("large", 77, 12)])
def test_expert_wins_from_mid_game_states(size, seed, k):
    with make(size=size) as env:
        env.reset(seed=seed)
        safe_random_walk(env, k, np.random.default_rng(seed))
        assert not env.done
        key, obs = env.state_key(), env.situation().observation
        first = env.expert_action()
        assert env.state_key() == key and env.situation().observation == obs  # asking changes nothing
        assert first in env.candidates
        play_expert(env)
        assert env.won, f"{size} seed {seed}: expert did not win from mid-game; history {env.history}"


@pytest.mark.parametrize("size", ["medium", "large"])
def test_read_only_moves_leave_the_game_and_the_experts_plan_as_they_were(size):
    from s1gym.tasks.twx import expert as twx_expert

    with make(size=size, fold="test") as env:
        env.reset(seed=4)
        safe_random_walk(env, 6, np.random.default_rng(4))  # off the gold path: the planner's plan
        planned = env.expert_action()
        plan = env._plan
        seen = set()
        for move in [m for m in env.candidates if twx_expert.leaves_state(m)]:
            tree = str(env.engine().pi.game().getObjectTree())
            env.step_move(move)
            assert str(env.engine().pi.game().getObjectTree()) == tree, move  # the game is as it was
            assert env.expert_action() == planned and env._plan == plan  # the plan kept, not made again
            seen.add(move.split()[0])
        assert seen >= {"examine", "look", "inventory"}  # (the cookbook to read is in the kitchen only)
        env.step_move(planned)  # the read-only moves between do not count: the plan goes on
        env.expert_action()
        assert env._plan[0] == plan[0] and env._plan[1][:len(plan[1])] == plan[1]


_PLANNER_FLAGS = ("isOpen", "isOpenable", "isChopped", "isSliced", "isDiced", "isFried", "isRoasted", "isGrilled")


def _planners_part(objects: dict) -> list:
    """TWX's objects (name -> object) as the planner reads them, in order: the true flags, nested contents."""
    return [(name, [f for f in _PLANNER_FLAGS if obj.get(f)], _planners_part(obj.get("contents", {})))
            for name, obj in objects.items()]


@pytest.mark.parametrize(("options", "seed"), [({"size": "medium"}, 3), ({"size": "large"}, 1), (HARD, 8)])
def test_the_planners_tree_is_twxs_tree_with_only_what_the_planner_reads(options, seed):
    import orjson

    with make(fold="test", **options) as env:
        env.reset(seed=seed)
        rng, kinds = np.random.default_rng(seed), set()
        for _ in range(60):  # random moves that change the game: things taken, put, opened, cut, cooked
            if env.done:
                break
            full = orjson.loads(str(env.engine().pi.game().getObjectTree()))
            env.engine().tree_after = lambda move: True  # the step brings the next tree (what the expert asks)
            slim = orjson.loads(env.engine().cooking_tree())
            assert list(slim) == ["player_location", "inventory", "locations", "recipe"]
            assert slim["player_location"] == full["player_location"]
            assert slim["recipe"] == full["recipe"]
            for part in ("inventory", "locations"):
                assert _planners_part(slim[part]) == _planners_part(full[part]), (part, env.moves)
            moves = [m for m in env.candidates if m.split()[0] not in ("examine", "look", "inventory", "read")]
            move = moves[int(rng.integers(len(moves)))]
            kinds.add(move.split()[0])
            env.step_move(move)
        assert kinds >= {"take", "put", "open", "move"}


def test_a_move_off_the_experts_plan_brings_the_next_plans_tree_with_the_step():
    from s1gym.tasks.twx import expert as twx_expert

    with make(size="medium", fold="test") as env:
        env.reset(seed=4)
        safe_random_walk(env, 6, np.random.default_rng(4))
        planned = env.expert_action()
        off = next(m for m in env.candidates if m != planned and m.split()[0] in ("open", "close", "take", "move"))
        env.step_move(off)
        engine = env.engine()
        brought, engine._tree = engine._tree, None
        assert brought is not None and brought == engine.cooking_tree()  # the state's tree, asked afresh
        assert not twx_expert.leaves_state(off)
        env.step_move(env.expert_action())  # on the plan: the next call plans nothing, so no tree comes
        assert env.engine()._tree is None


def test_expert_never_leaks_into_what_policies_see():
    with make(size="medium") as env:
        env.reset(seed=207)
        sit = env.situation()
        gold = env.unwrapped.gold_path()
        assert "cook carrot in barbeque" in gold
        assert "gold" not in sit.observation.lower() and "cook carrot in barbeque" not in sit.observation
        assert not any("gold" in k for k in env.step(0)[-1])


@pytest.mark.parametrize("task", OTHER_GAMES)
def test_other_games_expert_follows_the_gold_path(task):
    with make(task) as env:
        env.reset(seed=2)
        play_expert(env)
        assert env.won and env.score == 1.0


# -------------------------------------------------------------------- fork


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 999),
    prefix=st.lists(st.integers(0, 500), max_size=10),
    moves=st.lists(st.integers(0, 500), min_size=1, max_size=6),
)
def test_fork_independence_on_medium(seed, prefix, moves):
    with make(size="medium") as env:
        env.reset(seed=seed)
        for m in prefix:
            if env.done:
                break
            env.step(m % len(env.candidates))
        before = (env.state_key(), env.situation().observation, env.candidates, env.history)
        a, b = env.fork(), env.fork()
        assert (a.state_key(), a.situation().observation) == before[:2]
        trace_a = []
        for m in moves:
            if a.done:
                break
            trace_a.append(a.step(m % len(a.candidates))[:4])
        assert (env.state_key(), env.situation().observation, env.candidates, env.history) == before
        c = b.fork()
        for env_x in (b, c):
            trace = []
            for m in moves:
                if env_x.done:
                    break
                trace.append(env_x.step(m % len(env_x.candidates))[:4])
            assert trace == trace_a
        assert (env.state_key(), env.candidates) == (before[0], before[2])
        for x in (a, b, c):
            x.close()


def test_unstepped_fork_is_lazy_and_stepped_forks_hold_game_objects_of_their_own():
    with make(size="medium") as env:
        env.reset(seed=207)
        for _ in range(10):
            env.step(0)
        opened = env._pool().opened
        replayed = env._pool().replayed_moves  # the process's pool: earlier tests' replays (test_faults') count
        fork = env.fork()
        assert fork.game_state is env.game_state  # shares the state: no game object of its own yet
        assert fork.situation().observation == env.situation().observation
        assert env._pool().opened == opened
        snapshot = env.game_state.snapshot
        assert snapshot is not None  # taken when the fork was made (the JVM's snapshot helper)
        fork.step(0)  # takes the env's game object: the env restores its snapshot into another when it steps
        assert env.game_state.engine is None and fork.game_state.engine is not None
        env.step(0)
        assert env.game_state.engine is not None and fork.game_state.engine is not env.game_state.engine
        assert fork.game_state.engine.pi is not env.game_state.engine.pi
        assert env._pool().replayed_moves == replayed
        fork.close()


def test_state_key_ignores_the_path_and_sees_hidden_changes():
    with make(size="medium") as env:
        env.reset(seed=207)
        start = env.state_key()
        for move in ("move east", "move west"):
            env.step(env.index_of(move))
        assert env.state_key() == start
        a, b = env.fork(), env.fork()
        for x, place in ((a, "fridge"), (b, "dishwasher")):
            for move in ("take cookbook", f"open {place}", f"put cookbook in {place}", f"close {place}", "move east"):
                x.step(x.index_of(move))
        assert a.situation().observation.split("\n\n", 1)[1] == b.situation().observation.split("\n\n", 1)[1]
        assert a.state_key() != b.state_key()  # the cookbook is in a different closed container


# --------------------------------------------------------------- JVM sharing


def java_children() -> list[int]:
    me = str(os.getpid())
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmd = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if ppid == me and b"java" in cmd and b"textworld_express" in cmd:  # not another family's JVM
            out.append(int(proc.name))
    return out


def test_one_jvm_per_process_and_close_keeps_it_for_the_others():
    envs = [make(task) for task in ["CookingWorld", "CoinCollector", "TWC", "Sorting"]]
    for e in envs:
        e.reset(seed=1)
    forks = [e.fork() for e in envs for _ in range(3)]
    for f in forks:
        f.step(0)
    jvm = _jvm.current_jvm()
    assert jvm is not None and len(java_children()) == 1
    refs = jvm.refs
    envs[0].close()
    envs[0].close()  # idempotent
    assert jvm.refs == refs - 1
    for f in forks[3:]:  # the other envs and forks still play, in the same JVM
        f.step(0)
    assert _jvm.current_jvm() is jvm and len(java_children()) == 1
    for x in envs + forks:
        x.close()


def _child_drops_what_it_inherited(conn) -> None:
    import gc

    from s1gym.engines import base as engine

    gc.collect()  # whatever the child let go of is finalized now
    conn.send(len(engine.pool_stats()))
    conn.close()


def test_a_forked_child_leaves_the_parents_jvm_objects_alone():
    """An async vector env forks workers: a child starts with no pools of its own, keeps (never frees,
    never uses) the parent's, and the parent's pooled engines play on afterwards. (A guard: a full-suite
    run once failed with "Target Object ID does not exist for this gateway" after such forks; freeing
    inherited py4j objects in a child can detach them in the parent's JVM, which this order rules out.)"""
    import multiprocessing

    env = make(size="small")
    env.reset(seed=1)
    forks = [env.fork() for _ in range(4)]
    for f in forks:
        f.step(0)  # each fork takes an engine from the pool
    for f in forks:
        f.close()  # and gives it back
    env.close()  # now only the process's pool holds those engines
    del env, forks
    ctx = multiprocessing.get_context("fork")
    parent_end, child_end = ctx.Pipe()
    child = ctx.Process(target=_child_drops_what_it_inherited, args=(child_end,))
    child.start()
    assert parent_end.recv() == 0  # the child starts with no pools of its own
    child.join(60)
    assert child.exitcode == 0
    env = make(size="small")  # the same pool, its idle engines play again
    env.reset(seed=2)
    forks = [env.fork() for _ in range(4)]
    for f in forks:
        f.step(0)
        f.close()
    env.close()


def test_closed_game_objects_are_reused():
    env = make(size="small")
    env.reset(seed=0)
    env.step(0)
    pi = env.game_state.engine.pi
    env.close()
    with make(size="small") as other:
        other.reset(seed=0)
        assert other.game_state.engine.pi is pi  # taken from the pool, not a new Scala object


def test_missing_java_gets_an_install_hint(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(_jvm.JavaNotFoundError, match="apt-get install openjdk-17-jre-headless"):
        _jvm.check_java()


def test_a_forked_child_never_frees_the_parents_java_objects():
    """py4j frees a Java object by a command on its gateway's socket when the proxy is collected; a forked
    child collecting inherited proxies wrote on the parent's socket and the parent waited forever for its
    reply (make_vec async hung). In the child the parent's gateway frees nothing; the parent is untouched."""
    with gym.make("s1/CoinCollector-v0") as env:
        env.reset(seed=0)
        client = _jvm.current_jvm().gateway._gateway_client
        pid = os.fork()
        if pid == 0:  # the child: no command may reach the parent's JVM
            os._exit(0 if client.garbage_collect_object(123) is None and "garbage_collect_object" in vars(client) else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert "garbage_collect_object" not in vars(client)
        env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))  # the parent's socket still answers


def test_a_killed_jvm_is_noticed_and_replaced():
    """kill -9 of the JVM: it is no longer the current one, and the next env gets a fresh JVM process."""
    env = gym.make("s1/CookingWorld-v0").unwrapped
    env.reset(seed=3)
    old = _jvm.current_jvm()
    assert old is not None and old.alive()
    old.process.kill()
    old.process.wait(timeout=10)
    assert not old.alive() and _jvm.current_jvm() is None
    env.close()
    fresh = gym.make("s1/CookingWorld-v0").unwrapped
    fresh.reset(seed=3)
    new = _jvm.current_jvm()
    assert new is not None and new is not old and new.process.pid != old.process.pid and new.alive()
    fresh.close()


def test_twc_situation_carries_each_moves_reward_aligned_with_the_history():
    # Situation.rewards: what any RL agent sees (the step's reward), one per move of history; forks keep it
    with make("TWC") as env:
        u = env.unwrapped
        u.reset(seed=1)
        assert u.situation().rewards == ()
        got = []
        for _ in range(6):
            got.append(u.step(u.index_of(u.situation().privileged.expert_action()))[1])
        s = u.situation()
        assert s.rewards == tuple(got) and len(s.rewards) == len(s.history) == 6
        assert any(r > 0 for r in got) and sum(got) == pytest.approx(s.score)
        child = u.fork()
        try:
            reward = child.step(0)[1]
            assert child.situation().rewards == (*got, reward) and u.situation().rewards == tuple(got)
        finally:
            child.close()
        u.reset(seed=2)
        assert u.situation().rewards == () == u.situation().history
