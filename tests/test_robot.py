"""The robot family (s1/PickPlace-v0, s1/PickPlaceRaw-v0) on real MuJoCo physics: scenes named by their seed,
a camera's text that hides the physics, forks that continue bit-identically, the privileged expert winning a
trap scene the handwritten script loses, the raw twin's small moves, pictures, bad options. The Gymnasium
contract (check_env, spaces, masks, make_vec...) is tests/test_contract.py's, on every id."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("mujoco", reason="the robot extra is not installed: pip install 's1gym[robot]'")

import gymnasium as gym

import s1gym  # noqa: F401  (registers the ids)
from s1gym.tasks.robot.scene import draw_scene


def make(env_id: str = "s1/PickPlace-v0", **options):
    return gym.make(env_id, **{"fold": "train", "hard": True, **options}).unwrapped


def play(env, choose) -> list[str]:
    moves = []
    while not env.done:
        move = choose(env)
        moves.append(move)
        env.step_move(move)
    return moves


def test_a_seed_names_one_scene_and_the_folds_never_share_one():
    scene = draw_scene("train", 1, hard=True)
    assert scene == draw_scene("train", 1, hard=True)
    assert (scene.instruction, scene.traps, [b.colour for b in scene.blocks]) == (
        "Put the red block on the target.", ("occupied", "slippery"), ["red", "blue"])
    others = {draw_scene(fold, 1, hard=True) for fold in ("dev", "test")}
    assert scene not in others and len(others) == 2


def test_the_text_says_what_a_camera_sees_and_hides_mass_and_friction():
    env = make()
    obs, info = env.reset(seed=1)
    lines = obs.splitlines()
    assert lines[0] == "A new scene: Put the red block on the target."
    assert "Gripper: open (10 cm between the fingers), empty, at x=+4 y=-0, 13 cm high, turned 0 degrees." in lines
    assert "Skills used: 0 of 30; control steps used: 0 of 900." in lines
    assert sum(line.startswith("- ") and " block (" in line for line in lines) == 2
    assert not any(word in obs.lower() for word in ("kg", "mass", "friction", "slippery", "heavy"))
    assert info["control_steps"] == 0 and env.action_space.n == 32


def test_the_expert_wins_a_trap_scene_that_the_handwritten_script_loses():
    """Train seed 1: the red block is heavy and slippery and the blue one stands on the target. The expert
    (reading the hidden physics) clears the target and lifts slowly; the fixed script lifts fast and drops
    the red block again and again."""
    env = make()
    env.reset(seed=1)
    expert = play(env, lambda e: e.expert_action())
    assert (env.won, env.steps, env.score) == (True, 13, 1.0)
    assert expert == ["move above the blue block", "lower", "grasp", "lift", "carry the blue block to the free spot",
                      "lower", "release", "move above the red block", "lower", "grasp", "lift slowly",
                      "carry the red block above the target", "release"]
    assert env.history[-1][1].endswith("The gripper let go of the red block. The goal is reached.")
    env.reset(seed=1)
    rule = play(env, lambda e: e.rule_action())
    assert (env.won, env.steps) == (False, 30) and rule[:4] == ["move above the red block", "lower", "grasp", "lift"]
    assert any("slipped out of the gripper" in feedback for _, feedback in env.history)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.lists(st.integers(0, 31), max_size=3), after=st.lists(st.integers(0, 31), min_size=1, max_size=2))
def test_a_fork_continues_bit_identically_and_alone(prefix, after):
    """Also from a closed fork's ``MjData`` (reused, dirty from its own moves): the copy overwrites all of it."""
    env = make()
    env.reset(seed=2)

    def moves(e, picks):
        for pick in picks:
            if e.done:
                return
            e.step_move(e.candidates[pick % len(e.candidates)])

    moves(env, prefix)
    before = env.situation().observation
    used = env.fork()
    moves(used, [*after, 7])
    spare = used.arm.data
    used.close()
    clone = env.fork()
    assert clone.arm.data is spare
    moves(clone, after)
    assert env.situation().observation == before          # the fork played alone
    moves(env, after)
    assert clone.situation().observation == env.situation().observation
    assert np.array_equal(clone.arm.data.qpos, env.arm.data.qpos)
    assert np.array_equal(clone.arm.data.qvel, env.arm.data.qvel)


def test_a_block_pushed_over_the_edge_is_lost_at_once_and_never_a_win():
    """Train seed 119 (clear): a push leaves the green block with its centre past the table's edge, still above
    the table top (it tips off a moment later). That is lost at once, so Search and Lookahead prune the push;
    it empties the area, but a block on the floor is no cleared block (score: 1 of the 2 that started inside)."""
    from s1gym.tasks.robot.scene import TABLE_CENTRE, TABLE_HALF, TABLE_TOP

    env = make()
    env.reset(seed=119)
    for move in ("move to the free spot", "move above the yellow block", "push the yellow block away from the target",
                 "retreat", "lift slowly"):
        assert not env.step_move(move)[4]["lost"]
    _obs, reward, terminated, _truncated, info = env.step_move("push the green block away from the target")
    green = env.arm.block("green").pos
    assert green[2] > TABLE_TOP and green[0] - TABLE_CENTRE[0] > TABLE_HALF[0]    # over the edge, not yet down
    assert (info["lost"], info["won"], terminated, info["score"]) == (True, False, True, 0.45)
    assert env.history[-1][1].endswith("The green block tipped over. The green block fell off the table.")
    assert "- green block (6x6x6 cm): fallen off the table at x=+26 y=-19" in env.situation().observation


def test_the_score_counts_whole_centimetres_so_settling_is_no_progress():
    """Moving the empty gripper away shifts the resting blocks by a hair (physics never rests exactly): the
    subject's distance changes by ~1e-10 m, the score stays 0 (Search would bank any rise as a gain)."""
    env = make()
    env.reset(seed=0)
    before = env._view().subject_distance()
    env.step_move("move to the free spot")
    assert 0 < abs(env._view().subject_distance() - before) < 1e-6 and env.score == 0.0


def test_a_step_that_would_drop_contacts_raises_instead(monkeypatch, tmp_path):
    from s1gym.tasks.robot import scene as scenes

    monkeypatch.chdir(tmp_path)   # MuJoCo writes its warning to MUJOCO_LOG.TXT in the working directory
    from s1gym.tasks.robot.arm import Arm, ArenaFull

    scene = draw_scene("train", 3, hard=True)
    monkeypatch.setattr(scenes, "ARENA_BYTES", 120 * 1024)   # the scene's contacts need ~160 KB
    scenes.build_model.cache_clear()
    try:
        arm = Arm(scene)
        with pytest.raises(ArenaFull, match=r"arena memory \(122880 bytes\) for the contacts of scene train:3 "
                                            r"at control step 4: .* Raise s1gym.tasks.robot.scene.ARENA_BYTES"):
            for _ in range(40):
                arm.control(np.array([0.0, 0.0, -0.05]))
    finally:
        scenes.build_model.cache_clear()


def test_the_raw_twin_moves_the_gripper_two_centimetres_a_step_and_has_no_expert():
    env = make("s1/PickPlaceRaw-v0")
    obs, _ = env.reset(seed=1)
    assert env.candidates == ("move 2 cm away", "move 2 cm closer", "move 2 cm left", "move 2 cm right",
                              "move 2 cm up", "move 2 cm down", "open the gripper", "close the gripper")
    heights = []
    for _ in range(3):
        env.step_move("move 2 cm up")
        heights.append(next(line for line in env.situation().observation.splitlines() if line.startswith("Gripper")))
    assert [h.split(", ")[2] for h in heights] == ["at x=+4 y=-0", "at x=+4 y=-0", "at x=+4 y=-0"]
    assert [h.split(", ")[3] for h in heights] == ["14 cm high", "16 cm high", "17 cm high"]
    assert env.history[-1][1] == "You did: move 2 cm up (1 control step)."
    with pytest.raises(NotImplementedError, match="has no expert"):
        env.expert_action()


def test_a_screenshot_is_a_png_of_the_scene():
    from PIL import Image

    env = make()
    env.reset(seed=1)
    image = Image.open(io.BytesIO(env.screenshot()))
    assert (image.format, image.size) == ("PNG", (480, 360))
    pixels = np.asarray(image.convert("RGB"), dtype=np.int32)
    assert pixels.std() > 10                         # a scene, not a blank frame
    red = (pixels[..., 0] > 150) & (pixels[..., 1] < 80) & (pixels[..., 2] < 80)
    assert red.sum() > 50                            # the red block is in view


@pytest.mark.parametrize(("options", "message"), [
    ({"fold": "val"}, "fold must be one of \\['train', 'dev', 'test'\\], got 'val'"),
    ({"blocks": 5}, "blocks must be 1-4, got 5"),
    ({"goal": "stack", "blocks": 1}, "goal 'stack' needs blocks >= 2, got 1"),
    ({"goal": "throw"}, "goal must be one of"),
    ({"hard": "maybe"}, "hard must be true or false, got 'maybe'"),
])
def test_bad_options_name_the_problem(options, message):
    with pytest.raises(ValueError, match=message):
        make(**options)


def test_the_shipped_model_lifts_fast_blind_and_slowly_once_it_sees_the_outcomes():
    """The paper's point on one state (train seed 1, a fitted-on scene: this pins behaviour, not a score):
    the heavy slippery red block is grasped. Without outcomes Local's shipped model lifts fast, as it would
    any block; with Lookahead it sees "slipped out of the gripper" after ``lift`` and picks ``lift slowly``."""
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    env = make()
    env.reset(seed=1)
    for move in ("move above the blue block", "lower", "grasp", "lift", "carry the blue block to the free spot",
                 "lower", "release", "move above the red block", "lower", "grasp"):
        env.step_move(move)
    situation = env.situation()
    texts = [c.text for c in situation.candidates]
    assert "lower" not in texts and "lift slowly" in texts     # lowered onto the table: a lower would not move

    def top(decision, k=3):
        order = np.argsort(-decision.probabilities, kind="stable")[:k]
        return [(texts[i], pytest.approx(float(decision.probabilities[i]), abs=1e-3)) for i in order]

    assert top(Local(preload=False).decide(situation)) == [("lift", 0.475), ("release", 0.302),
                                                           ("lift slowly", 0.220)]
    assert top(Lookahead(Local(preload=False)).decide(situation)) == [
        ("lift slowly", 0.926), ("carry the red block above the target", 0.046), ("release", 0.0195)]


def test_the_progress_estimate_counts_down_the_skills_left_along_the_experts_plan():
    """The task's shipped estimate (Search's h, as the family declares it; ``python -m s1gym.tasks.robot.fit``
    fits it on train scenes): on train seed 1, whose expert wins in 13 skills, it reads 13.26 at the start,
    6.59 once the blocker is set down on the free spot (6 left), 2.40 with the red block held over the target
    (1 left). The raw twin's moves are no skills: it has none."""
    from s1gym import registration

    env = make()
    estimate = registration.progress_estimate(env.task_name)
    env.reset(seed=1)
    values = []
    while not env.done:
        values.append(estimate(env.situation()))
        env.step_move(env.expert_action())
    assert env.steps == 13
    assert [round(values[i], 4) for i in (0, 7, 12)] == [13.2563, 6.5922, 2.3993]
    assert registration.progress_estimate(make("s1/PickPlaceRaw-v0").task_name) is None


def _physics(arm) -> dict:
    """Every field of the arm's MjData the task reads or the next step starts from, copied."""
    d = arm.data
    out = {f: np.array(getattr(d, f)) for f in ("time", "qpos", "qvel", "act", "ctrl", "qacc_warmstart", "mocap_pos",
                                           "mocap_quat", "xpos", "xquat", "xmat", "site_xpos", "qacc")}
    out["contacts"] = np.array([(c.geom1, c.geom2, *c.pos, *c.frame) for c in d.contact[: d.ncon]])
    return out


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@settings(max_examples=6, deadline=None)
@given(env_id=st.sampled_from(["s1/PickPlaceRaw-v0", "s1/PickPlace-v0"]),
       picks=st.lists(st.integers(0, 31), min_size=2, max_size=6), live=st.integers(1, 3))
def test_forks_hold_the_compact_state_and_parked_arms_come_back_bit_identically(env_id, picks, live):
    """Issue 55: a fork holds the integration state (~3 KB), no MjData, until it is stepped or read; with only
    ``live`` arms allowed an MjData, the others are parked and rebuilt from it when read again. A chain of forks,
    each stepped once and kept (as Search keeps the env of every expanded node), matches the same moves played
    on one env at every step, and a parked fork read again equals what it was when it was stepped, bit for bit:
    body and site poses, contacts (what is held), velocities, the solver's warm start."""
    from s1gym.tasks.robot.arm import DATA_POOL

    limit = DATA_POOL.live_limit
    DATA_POOL.live_limit = live
    try:
        plain, chain = make(env_id), make(env_id)
        plain.reset(seed=5)
        chain.reset(seed=5)
        kept = []                                   # (fork, its physics and observation when it was stepped)
        for pick in picks:
            if plain.done:
                break
            move = plain.candidates[pick % len(plain.candidates)]
            fork = chain.fork()
            assert fork.arm._data is None and fork.arm.state().nbytes < 4096   # 1-4 blocks: 294-387 numbers
            fork.step_move(move)
            plain.step_move(move)
            assert fork.situation().observation == plain.situation().observation
            assert _same(_physics(fork.arm), _physics(plain.arm))
            kept.append((fork, _physics(fork.arm), fork.situation().observation))
            chain = fork
        assert sum(f.arm._data is not None for f, _, _ in kept) <= live
        for fork, physics, observation in kept:     # rebuilt where parked, in the order Search would read them
            assert fork.situation().observation == observation
            assert _same(_physics(fork.arm), physics)
    finally:
        DATA_POOL.live_limit = limit


def test_a_closed_fork_says_so():
    env = make("s1/PickPlaceRaw-v0")
    env.reset(seed=1)
    arm = env.fork().arm
    arm.release()
    with pytest.raises(RuntimeError, match="this arm was released .*fork the env before closing it"):
        arm.control(np.zeros(3))


def test_a_spare_keeps_no_warning_of_the_arm_that_had_it():
    """A spare ``MjData`` carries its last arm's warning counters; a fork rebuilt in it starts from none (a
    stale "contacts full" count would make its first step raise ArenaFull)."""
    import mujoco

    env = make("s1/PickPlaceRaw-v0")
    env.reset(seed=1)
    used = env.fork()
    used.step_move("move 2 cm down")
    spare = used.arm.data
    spare.warning[int(mujoco.mjtWarning.mjWARN_CONTACTFULL)].number = 3
    used.close()
    fork = env.fork()
    fork.step_move("move 2 cm down")
    assert fork.arm.data is spare and fork.arm.data.warning[int(mujoco.mjtWarning.mjWARN_CONTACTFULL)].number == 0
