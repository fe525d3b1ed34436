"""The env contract of ../shared/DESIGN.md, checked on every registered task.

Each task runs here with its default options (which must work anywhere, from
data the package ships) except where ``FAST_OPTIONS`` picks a quicker variant.
Task-specific behaviour is tested in each task's own test file.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s1gym
from s1gym.core import S1Env, Situation

FAST_OPTIONS: dict[str, dict] = {
    "s1/CookingWorld-v0": {"size": "small"},
}

ENGINE_EXTRAS = {"s1/ALFWorld-v0": "alfworld", "s1/MiniWoB-v0": "playwright", "s1/Flights-v0": "playwright"}
#: Tasks whose episodes end within the vector test's 40 random steps (the autoreset is exercised).
QUICK_EPISODES = {"s1/Blackjack-v0", "s1/Millionaire-v0", "s1/TicketRouter-v0", "s1/InjectionGuard-v0"}
#: Engines that cost tens of ms a step: fewer vector steps.
SLOW_STEPS = {"s1/ALFWorld-v0", "s1/Calculator-v0", "s1/MiniWoB-v0", "s1/Flights-v0"}


def skip_if_unavailable(env_id: str) -> None:
    """Skip a task whose machine-level stack is absent (only then: CI installs it, so there it runs)."""
    if env_id == "s1/Calculator-v0":
        from s1gym.tasks.desktop.calculator import unavailable

        reason = unavailable()
        if reason:
            pytest.skip(reason)


def make(env_id: str, **extra) -> S1Env:
    bare = env_id.removeprefix("s1gym:")
    if bare in ENGINE_EXTRAS:
        pytest.importorskip(ENGINE_EXTRAS[bare], reason=f"the optional extra for {bare} is not installed")
    skip_if_unavailable(bare)
    return gym.make(env_id, **{**FAST_OPTIONS.get(bare, {}), **extra})


TASKS = s1gym.task_ids()
PROPERTY = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: Property examples on tasks whose step is a browser page's (0.1-0.3 s, and a fork replays its moves): their
#: forks and determinism are checked in depth by tests/test_web_forks.py and over every page by bench/web.py;
#: TextWorld's (a game compiled per seed, about 1 s an example) by tests/test_textworld.py against
#: TextWorld's own env.copy()
FEWER_EXAMPLES = {"s1/MiniWoB-v0": 4, "s1/Flights-v0": 4, "s1/TextWorld-v0": 4}


def property_settings(env_id: str) -> settings:
    """:data:`PROPERTY` with the task's number of examples."""
    return settings(PROPERTY, max_examples=FEWER_EXAMPLES.get(env_id, PROPERTY.max_examples))


@pytest.fixture(scope="module", params=TASKS)
def env_id(request) -> str:
    return request.param


def play(env: S1Env, choices: list[int]) -> list[tuple]:
    """Step with ``choices`` (each taken modulo the number of candidates); the trace of results."""
    trace = []
    for c in choices:
        if env.done or not env.candidates:
            break
        obs, reward, terminated, truncated, info = env.step_move(env.candidates[c % len(env.candidates)])
        trace.append((obs, reward, terminated, truncated, normalise(info)))
    return trace


def normalise(info: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in info.items()}


def assert_index_meanings(env: S1Env, info: dict) -> None:
    """Index i means info["candidates"][i]; the mask marks exactly the legal moves."""
    mask = info["action_mask"]
    if env.game_over:
        assert mask.tolist() == [1] * env.action_space.n  # the documented end-of-game convention
        return
    for move in env.candidates:
        i = env.index_of(move)
        assert info["candidates"][i] == move and mask[i] == 1
    assert int(mask.sum()) == len(env.candidates)


def snapshot(env: S1Env) -> tuple:
    sit = env.situation()
    return (sit.observation, sit.texts, sit.history, sit.score, sit.state_key, env.won, env.lost, env.steps)


def test_make_returns_the_task_env_itself(env_id):
    with make(env_id) as env:
        assert isinstance(env, S1Env)
        assert env.unwrapped is env
        env.reset(seed=1)
        twin = env.fork()  # a direct call: no Gymnasium wrapper in between
        assert type(twin) is type(env) and twin is not env and twin.situation() == env.situation()
        twin.close()


def test_make_with_module_prefix(env_id):
    with make("s1gym:" + env_id) as env:  # the same checks and options as every other id, prefixed
        assert isinstance(env, S1Env) and env.unwrapped is env
        assert env.spec is not None and env.spec.id == env_id


def test_check_env(env_id):
    with make(env_id) as env:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning of Gymnasium's checker is a contract failure here
            check_env(env.unwrapped, skip_render_check=True)


def test_reset_info_and_spaces(env_id):
    with make(env_id) as env:
        obs, info = env.reset(seed=3)
        assert env.observation_space.contains(obs), "observation has characters outside the Text charset"
        for key in ("candidates", "action_mask", "score", "won", "lost", "invalid_action"):
            assert key in info, f"info lacks {key!r}"
        n = env.action_space.n
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (n,)
        assert len(info["candidates"]) <= n and int(info["action_mask"].sum()) == len(env.candidates)
        assert_index_meanings(env, info)
        assert np.array_equal(env.action_masks(), info["action_mask"])
        assert 0.0 <= info["score"] <= 1.0
        assert len(info["candidates"]) > 0


def test_invalid_and_out_of_range_moves_are_no_ops(env_id):
    with make(env_id) as env:
        env.reset(seed=5)
        before = snapshot(env)
        n = env.action_space.n
        bad = [n + 3, -1]
        masked = np.flatnonzero(env.action_masks() == 0)
        if masked.size:
            bad.append(int(masked[0]))
        for action in bad:
            obs, reward, terminated, truncated, info = env.step(action)
            assert info["invalid_action"] is True
            assert reward == 0.0
            assert "nvalid" in obs
            after = snapshot(env)
            assert after[1:-1] == before[1:-1], "an invalid move changed the state"
            assert after[-1] == before[-1] + 1, "an invalid move counts toward the step limit"
            before = after
        with pytest.raises(ValueError, match="not a candidate"):
            env.index_of("this move does not exist 123")
        first = env.index_of(env.candidates[0])
        assert env.action_masks()[first] == 1 and np.flatnonzero(env.action_masks())[0] == first


def test_reward_is_score_change_and_situation_matches(env_id):
    with make(env_id) as env:
        _, info = env.reset(seed=11)
        rng = np.random.default_rng(0)
        score = info["score"]
        for _ in range(30):
            if env.done:
                break
            _, reward, terminated, truncated, info = env.step_move(env.candidates[int(rng.integers(len(env.candidates)))])
            assert reward == pytest.approx(info["score"] - score)
            score = info["score"]
            assert terminated == info["game_over"]
            sit = env.situation()
            assert isinstance(sit, Situation)
            assert sit.texts == env.candidates
            assert sit.score == info["score"]
            assert_index_meanings(env, info)


def test_same_seed_same_indices_same_game(env_id):
    @property_settings(env_id)
    @given(seed=st.integers(0, 10_000), choices=st.lists(st.integers(0, 1_000), min_size=0, max_size=12))
    def check(seed, choices):
        a, b = make(env_id), make(env_id)
        try:
            ra, rb = a.reset(seed=seed), b.reset(seed=seed)
            assert ra[0] == rb[0] and normalise(ra[1]) == normalise(rb[1])
            assert play(a, choices) == play(b, choices)
        finally:
            a.close()
            b.close()

    check()


def test_fork_is_independent_and_identical(env_id):
    @property_settings(env_id)
    @given(
        seed=st.integers(0, 10_000),
        prefix=st.lists(st.integers(0, 1_000), max_size=8),
        fork_moves=st.lists(st.integers(0, 1_000), min_size=1, max_size=6),
        common=st.lists(st.integers(0, 1_000), min_size=1, max_size=6),
    )
    def check(seed, prefix, fork_moves, common):
        with make(env_id) as env:
            env.reset(seed=seed)
            play(env, prefix)
            before = snapshot(env)
            fork = env.fork()
            assert snapshot(fork) == before
            play(fork, fork_moves)  # stepping the fork never changes the original
            assert snapshot(env) == before
            twin = env.fork()
            grandchild = twin.fork()  # forks of forks
            trace = play(env, common)
            assert play(twin, common) == trace
            assert play(grandchild, common) == trace

    check()


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random index among the mask's ones (the usual masked sampling)."""
    return int(rng.choice(np.flatnonzero(mask)))


#: tasks with no expert by design: the robot's raw-control twin (2 cm moves; the paper's raw route has none)
EXPERTLESS = {"s1/PickPlaceRaw-v0"}


def test_the_expert_move_is_a_candidate_and_reading_it_changes_nothing_a_player_sees(env_id):
    """``expert_move()`` (what the runner's agreement columns compare with) names a candidate, on every
    task with an expert (ALFWorld's handcoded one, TWX's gold path and planners, the web tasks' exact
    solvers, the robot's privileged replanner...), and reading it leaves the observation, candidates,
    history and RNG as they were; on the :data:`EXPERTLESS` tasks it is None in every state and Rule is
    refused with the reason."""
    with make(env_id).unwrapped as env:
        env.reset(seed=0)
        named = 0
        for _ in range(4):
            if env.done or not env.candidates:
                break
            before = (snapshot(env), repr(env.np_random.bit_generator.state))
            move = env.expert_move()
            assert (snapshot(env), repr(env.np_random.bit_generator.state)) == before
            assert move is None or move in env.candidates
            named += move is not None
            env.step_move(move if move is not None else env.candidates[0])
        if env_id in EXPERTLESS:
            assert named == 0
            with pytest.raises(NotImplementedError, match="has no expert"):
                env.expert_action()
        else:
            assert named, f"{env_id}: no expert move in its first states"


def test_info_keys_keep_one_type_for_the_whole_episode(env_id):
    """Gymnasium's vector envs stack each info key into one array per step: a key whose type changes
    (None mid-game, a number at the end) or that comes and goes breaks them."""
    rng = np.random.default_rng(0)
    with make(env_id) as env:
        types: dict[str, set[type]] = {}
        for seed in (1, 2):
            _, info = env.reset(seed=seed)
            infos = [info]
            for _ in range(25):
                *_, terminated, truncated, info = env.step(random_legal(rng, info["action_mask"]))
                infos.append(info)
                if terminated or truncated:
                    break
            for info in infos:
                assert set(info) == set(infos[0]), f"info keys change within an episode: {set(info) ^ set(infos[0])}"
                for key, value in info.items():
                    types.setdefault(key, set()).add(type(value))
        mixed = {k: sorted(t.__name__ for t in ts) for k, ts in types.items() if len(ts) > 1}
        assert not mixed, f"info keys with more than one type: {mixed}"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_runs_episodes_through_autoreset(env_id, mode):
    """``gym.make_vec`` (sync and async) plays past episode ends with masked random actions: infos
    stack, and the all-ones mask of a finished game serves the autoreset step."""
    if env_id in ENGINE_EXTRAS:
        pytest.importorskip(ENGINE_EXTRAS[env_id])
    skip_if_unavailable(env_id)
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, **FAST_OPTIONS.get(env_id, {}))
    rng = np.random.default_rng(0)
    try:
        n = envs.single_action_space.n
        obs, infos = envs.reset(seed=[4, 5])
        assert len(obs) == 2 and infos["action_mask"].shape == (2, n)
        ended = 0
        for _ in range(12 if env_id in SLOW_STEPS else 40):
            actions = np.array([random_legal(rng, m) for m in infos["action_mask"]])
            obs, rewards, terminated, truncated, infos = envs.step(actions)
            assert infos["action_mask"].dtype == np.int8 and infos["score"].dtype == np.float64
            assert all(isinstance(o, str) for o in obs)
            ended += int(np.sum(terminated | truncated))
        if env_id in QUICK_EPISODES:
            assert ended > 0, "no episode ended: the autoreset step was never exercised"
    finally:
        envs.close()
