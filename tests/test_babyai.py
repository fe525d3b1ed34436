"""s1/BabyAI-v0 on the real minigrid: the text view, the mask, exact forks, the bot as expert, the family."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("minigrid", reason="BabyAI needs minigrid: pip install -e '.[babyai]'")

import s1gym  # noqa: F401  (registers s1/BabyAI-v0)
from s1gym.tasks.babyai.env import BabyAIEnv
from s1gym.tasks.babyai.world import ACTIONS, DEFAULT_LEVELS

PROPERTY = settings(max_examples=20, deadline=None)

#: PutNextLocal, test fold, seed 4, after "turn left": the view written out in full
PUT_NEXT_AFTER_LEFT = """You turn left.

Level: PutNextLocal.

Mission: put the green box next to the purple box
In view:
- a purple box 1 step ahead, 2 to the right (3 moves away, first move forward)
Seen before, out of view now:
- a purple ball 1 step behind, 1 to the right (3 moves away, first turn right)
- a blue ball 3 steps behind, 2 to the right (6 moves away, first turn right)
Cells seen so far: 39.
Nearest unseen cell: 3 moves away, first turn left.
In front of you: nothing (the cell is free).
Walls: ahead 2 steps away, left 3 steps away, right none in view.
You carry nothing.

Moves: turn left, turn right, move forward"""


def test_the_text_view_of_a_known_game_is_exact() -> None:
    env = BabyAIEnv(level="PutNextLocal", fold="test")
    obs, info = env.reset(seed=4)
    assert obs.splitlines()[4:8] == [
        "Mission: put the green box next to the purple box",
        "In view:",
        "- a purple ball 1 step ahead, 1 to the right (2 moves away, first move forward)",
        "- a purple box 2 steps ahead, 1 to the left (3 moves away, first move forward)",
    ]
    assert info["level"] == "PutNextLocal" and info["mission"] == "put the green box next to the purple box"
    obs, reward, terminated, truncated, info = env.step_move("turn left")
    assert obs == PUT_NEXT_AFTER_LEFT
    assert (reward, terminated, truncated) == (0.0, False, False)
    obs, *_ = env.step_move("move forward")
    # remembered, from the agent's new place
    assert "- a purple ball 2 steps behind, 1 to the right (4 moves away, first turn right)\n" in obs
    assert "In front of you: a wall.\nWalls: ahead 1 step away, left 3 steps away" in obs
    assert obs.endswith("Moves: turn left, turn right")


def test_the_default_draws_the_seven_levels_by_seed_and_folds_differ() -> None:
    env = gym.make("s1/BabyAI-v0").unwrapped
    levels = [env.reset(seed=s)[1]["level"] for s in range(7)]
    assert tuple(levels) == DEFAULT_LEVELS
    train = env.reset(seed=3)[0]
    test = BabyAIEnv(fold="test").reset(seed=3)[0]
    assert train != test and env.max_steps == 576  # Open: the level's own limit


def test_an_unknown_level_or_fold_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown level 'GoToNowhere'.*GoToLocal.*SynthSeq"):
        BabyAIEnv(level="GoToNowhere")
    with pytest.raises(ValueError, match="fold must be one of"):
        BabyAIEnv(fold="holdout")


def test_resets_print_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    for level in ("PutNextLocal", "SynthSeq", "GoToSeq"):
        env = BabyAIEnv(level=level)
        for seed in range(10):
            env.reset(seed=seed)
    assert capfd.readouterr().out == ""


def _changes(env: BabyAIEnv, move: str) -> bool:
    """Whether stepping ``move`` on a fork changes the game's state (or ends it)."""
    child = env.fork()
    before = child.state_key()
    # step the engine directly: the env would refuse a masked slot
    _obs, _r, terminated, _t, _i = child.world.step(ACTIONS.index(move))
    return terminated or child.state_key() != before


@PROPERTY
@given(level=st.sampled_from(DEFAULT_LEVELS), seed=st.integers(0, 10_000),
       moves=st.lists(st.integers(0, 6), min_size=0, max_size=25))
def test_the_mask_keeps_exactly_the_moves_that_change_something(level: str, seed: int, moves: list[int]) -> None:
    env = BabyAIEnv(level=level)
    _obs, info = env.reset(seed=seed)
    for m in moves:
        if info["game_over"]:
            break
        for slot, legal in zip(ACTIONS, info["action_mask"], strict=True):
            if slot != "done":  # done changes nothing but a finished mission, which the env checks itself
                assert bool(legal) == _changes(env, slot), (slot, env._state_text())
        legal_now = [a for a, ok in zip(ACTIONS, info["action_mask"], strict=True) if ok]
        _obs, _r, _te, _tr, info = env.step_move(legal_now[m % len(legal_now)])


@PROPERTY
@given(level=st.sampled_from(("GoToLocal", "PutNextLocal", "UnlockPickup", "SynthSeq", "BossLevel")),
       seed=st.integers(0, 10_000), prefix=st.lists(st.integers(0, 6), max_size=15),
       rest=st.lists(st.integers(0, 6), min_size=1, max_size=15))
def test_a_fork_goes_on_exactly_like_its_original_and_never_touches_it(
        level: str, seed: int, prefix: list[int], rest: list[int]) -> None:
    env = BabyAIEnv(level=level)
    env.reset(seed=seed)
    for a in prefix:
        env.step(a)
    fork = env.fork()
    assert fork.np_random.bit_generator.state == env.np_random.bit_generator.state
    assert fork.world.np_random.bit_generator.state == env.world.np_random.bit_generator.state
    frozen = (env._observation(), env.state_key(), env.world.step_count)
    fork_results = [fork.step(a) for a in rest]
    assert (env._observation(), env.state_key(), env.world.step_count) == frozen  # the fork left it alone
    for a, (obs, reward, terminated, truncated, info) in zip(rest, fork_results, strict=True):
        o2, r2, te2, tr2, i2 = env.step(a)
        assert (o2, r2, te2, tr2) == (obs, reward, terminated, truncated)
        assert {k: v for k, v in i2.items() if k != "action_mask"} == {
            k: v for k, v in info.items() if k != "action_mask"}
        assert list(i2["action_mask"]) == list(info["action_mask"])


@pytest.mark.parametrize("level", ["GoToLocal", "PickupLoc", "PutNextLocal", "Open", "UnlockPickup", "SynthSeq"])
def test_the_bot_wins_and_its_move_is_always_a_candidate(level: str) -> None:
    env = BabyAIEnv(level=level, fold="dev")
    for seed in range(3):
        _obs, info = env.reset(seed=seed)
        while not (info["game_over"] or info["steps"] >= env.max_steps):
            move = env.expert_action()
            assert move in env.situation().texts
            _obs, _r, _te, _tr, info = env.step_move(move)
        assert info["won"] and info["score"] == 1.0


def test_the_expert_works_on_a_fork_off_its_path() -> None:
    env = BabyAIEnv(level="UnlockPickup")
    _obs, info = env.reset(seed=2)
    for move in ("turn left", "turn left", "turn right"):
        env.step_move(move)
    fork = env.fork()
    assert fork.expert_action() == env.expert_action()
    while not (info["game_over"] or info["steps"] >= fork.max_steps):
        _obs, _r, _te, _tr, info = fork.step_move(fork.expert_action())
    assert info["won"] and env.steps == 3


def test_a_sequence_scores_its_first_clause() -> None:
    env = BabyAIEnv(level="GoToSeq", fold="dev")
    _obs, info = env.reset(seed=0)
    scores = []
    while not info["game_over"]:
        _obs, _r, _te, _tr, info = env.step_move(env.expert_action())
        scores.append(info["score"])
    assert scores[-1] == 1.0 and 0.0 < min(s for s in scores if s > 0) < 1.0
    assert scores == sorted(scores)


def test_the_registry_finds_the_fitted_model_and_the_progress_estimate() -> None:
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    from s1gym import registration
    from s1gym.tasks.babyai.model import BabyAIModel

    model = registration.local_model("BabyAI")
    assert isinstance(model, BabyAIModel) and model.provenance["test"] == "fold test never used"
    env = BabyAIEnv(level="GoToLocal", fold="dev")
    env.reset(seed=1)
    situation = env.situation()
    estimate = registration.progress_estimate("BabyAI")
    assert estimate is not None and estimate(situation) >= 0.0
    assert len(model.scores(situation)) == len(situation.candidates)
    decision = Lookahead(Local()).decide(situation)
    assert situation.candidates[decision.action].text in situation.texts


def test_the_replay_view_draws_the_map_of_a_played_episode(tmp_path) -> None:
    """A real job (the bot on UnlockPickup, train seed 1) replayed: the views rebuild the map from the texts
    in the agent's starting frame; the agent, the door and the dropped key sit where minigrid has them."""
    from s1gym.reporting.replay.page import Strings, load_trial, trial_data
    from s1gym.reporting.replay.views import view_assets, view_kind
    from s1gym.runner.spec import evaluate

    assert view_kind("s1/BabyAI-v0") == "babyai"
    script, style = view_assets("s1/BabyAI-v0")
    assert "VIEWS.babyai = drawBabyAI" in script and ".bai-wall" in style
    evaluate("BabyAI", "rule", episodes=1, seed=1, options={"level": "UnlockPickup"}, out=tmp_path, job="bai")
    trial = load_trial(next((tmp_path / "bai").glob("*__1")))
    moves = [t["move"] for t in trial.episode["ticks"]]
    assert moves == ["turn right", "move forward", "pick up", "turn left", "move forward", "turn left", "move forward",
                     "toggle", "turn right", "drop", "turn left", "move forward", "move forward", "turn left", "pick up"]
    views = trial_data(trial, Strings())["views"]
    assert len(views) == 16 and {v["kind"] for v in views} == {"babyai"}
    first, end = views[0], views[-1]
    assert (first["agent"], first["carrying"], first["mission"]) == ([0, 0, "up"], "", "pick up the purple box")
    assert first["objects"] == [[-1, -1, "door", "yellow", "locked"], [2, 0, "key", "yellow", ""]]
    assert first["walls"] == [[-1, 0], [0, -4]]
    assert views[7]["agent"] == [0, -1, "left"] and [-1, -1, "door", "yellow", "open"] in views[8]["objects"]
    assert (end["agent"], end["carrying"]) == ([-2, -1, "down"], "purple box")
    assert end["objects"] == [[-1, -1, "door", "yellow", "open"], [0, -2, "key", "yellow", ""]]
    assert end["trail"] == [[0, 0], [1, 0], [1, -1], [0, -1], [-1, -1], [-2, -1]]
    assert (end["x0"], end["y0"], end["width"], end["height"]) == (-6, -4, 11, 6)

    # the truth: the same game in minigrid, the map's frame turned onto the grid's
    env = BabyAIEnv(level="UnlockPickup")
    env.reset(seed=1)
    (sx, sy), facing = env.world.agent_pos, env.world.dir_vec
    right = (-facing[1], facing[0])

    def world_cell(x: int, y: int) -> tuple[int, int]:  # map x is to the agent's right at the start, -y ahead
        return int(sx - y * facing[0] + x * right[0]), int(sy - y * facing[1] + x * right[1])

    for move in moves:
        env.step_move(move)
    assert world_cell(*end["agent"][:2]) == tuple(int(v) for v in env.world.agent_pos)
    for x, y, kind, colour, state in end["objects"]:
        obj = env.world.grid.get(*world_cell(x, y))
        assert (obj.type, obj.color) == (kind, colour) and (kind != "door" or obj.is_open == (state == "open"))
    assert all(env.world.grid.get(*world_cell(x, y)).type == "wall" for x, y in end["walls"])


def test_maskable_ppo_trains_on_babyai_and_only_ever_plays_legal_moves() -> None:
    """A MaskablePPO smoke on s1/BabyAI-v0 (GoToLocal, the text hashed): 256 PPO steps run, and every
    action taken, in training and in play, is one the mask allowed (an illegal one would raise here)."""
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    from s1gym.rl import EncodeText, HashedBagOfWords, play_episodes

    class LegalOnly(gym.Wrapper):
        def __init__(self, env: gym.Env) -> None:
            super().__init__(env)
            self.steps = 0

        def action_masks(self) -> np.ndarray:
            return self.env.get_wrapper_attr("action_masks")()

        def step(self, action):  # type: ignore[no-untyped-def]
            assert self.action_masks()[int(action)] == 1, (int(action), self.action_masks())
            self.steps += 1
            return self.env.step(action)

    torch.set_num_threads(1)
    env = LegalOnly(EncodeText(gym.make("s1/BabyAI-v0", level="GoToLocal", max_steps=32), HashedBagOfWords(dim=256)))
    model = MaskablePPO("MlpPolicy", env, seed=0, n_steps=128, batch_size=32, n_epochs=2).learn(256)
    assert env.steps >= 256
    finals = play_episodes(env, model, range(10**6, 10**6 + 3))
    assert len(finals) == 3 and all(f["steps"] <= 32 and f["level"] == "GoToLocal" for f in finals)


def test_the_view_names_the_parts_done_and_the_reader_takes_the_first_part_left() -> None:
    from s1gym.tasks.babyai.tokens import goal_of, read_view

    env = BabyAIEnv(level="SynthSeq", fold="dev")
    obs, info = env.reset(seed=0)
    assert info["mission"] == "go to a red ball and pick up the red key"
    assert goal_of(read_view(obs)) == ("goto", [("red", "ball")])
    while info["score"] == 0:
        obs, _r, _te, _tr, info = env.step_move(env.expert_action())
    assert "\nParts of the mission done: 1 of 2 (go to a red ball).\n" in obs
    view = read_view(obs)
    assert view.done_parts == ("go to a red ball",) and goal_of(view) == ("pickup", [("red", "key")])


def test_the_view_writes_true_ways_the_nearest_unseen_cell_and_where_objects_lay_at_the_start() -> None:
    """SynthSeq, dev seed 21 ("pick up the box on your left"; the agent starts at (18, 15) facing up, the
    box minigrid means is at (15, 20)): the view's notes, read back, and followed move by move."""
    from s1gym.tasks.babyai.tokens import candidate_tokens, goal_of, read_view

    env = BabyAIEnv(level="SynthSeq", fold="dev")
    obs, info = env.reset(seed=21)
    assert info["mission"] == "pick up the box on your left"
    assert ("- a closed blue door 1 step ahead, 2 to the right (4 moves away, first turn right; at the start: in "
            "front, on your right)\nCells seen so far: 14.\nNearest unseen cell: 2 moves away, first turn left.\n"
            "In front of you: a wall.") in obs
    view = read_view(obs)
    assert goal_of(view) == ("pickup", [("", "box", "on your left")])
    assert (view.seen[0].walk, view.seen[0].first, view.seen[0].places, view.unseen) == (
        4, "turn right", ("in front", "on your right"), (2, "turn left"))
    # the door's way, followed: each first move brings it one move nearer, and it ends in front
    for left in (3, 2, 1, 0):
        obs, *_ = env.step_move(next(s for s in read_view(obs).seen if s.kind == "door").first)
        door = next(s for s in read_view(obs).seen if s.kind == "door")
        assert door.walk == left
    assert "In front of you: a closed blue door." in obs
    # the bot finds the box: it lay behind and to the left of the start, so it matches; said to lie on the
    # right, it would not
    env.reset(seed=21)
    for _ in range(2):
        obs, *_ = env.step_move(env.expert_action())
    assert "- a green box 5 steps ahead, 3 to the right (8 moves away, first move forward; at the start: behind, " \
           "on your left)" in obs
    assert [t for t in candidate_tokens(env.situation())[2] if "way:" in t] == [
        "move forward|way:first", "move forward|pickup|way:first"]
    situation = env.situation()
    elsewhere = dataclasses.replace(situation, state_text=situation.state_text.replace(
        "behind, on your left)", "behind, on your right)"))
    assert read_view(elsewhere.state_text).seen[0].places == ("behind", "on your right")
    tokens = candidate_tokens(elsewhere)[2]
    assert not any("way:" in t for t in tokens) and "move forward|pickup|tgt:none" in tokens


def test_a_walk_opens_doors_and_moves_a_blocking_object_out_of_the_way() -> None:
    """A corridor of four cells seen, the agent at its west end facing east: a ball, a closed door, a free
    cell. Passing the ball costs Walk.MOVE_AWAY (pick it up), the door one move more than a free cell."""
    from s1gym.tasks.babyai.memory import Walk

    walk = Walk(4, 1, [1, Walk.MOVE_AWAY, 2, 1], 0, 0, 0)
    assert walk.to_face(1, 0) == (0, "")  # the ball, in front
    assert walk.to_face(2, 0) == (Walk.MOVE_AWAY, "pick up")
    assert walk.to_face(3, 0) == (Walk.MOVE_AWAY + 2, "pick up")
    assert walk.to_face(0, 0) == (Walk.MOVE_AWAY + 2, "pick up")  # back from the ball's cell: two turns
    assert Walk(4, 1, [1, 0, 2, 1], 0, 0, 0).to_face(3, 0) is None  # a wall (or, full-handed, an object)
    assert Walk(4, 1, [1, 1, 2, 1], 0, 0, 0).to_face(3, 0) == (3, "move forward")  # forward, toggle, forward


def test_a_door_to_open_may_be_an_open_one_when_no_other_matches() -> None:
    """minigrid counts "open the grey door" done when a toggle leaves it open: an open grey door is the
    target (shut it, open it again) when no closed one matching is known; a closed one comes first."""
    from s1gym.tasks.babyai.tokens import candidate_tokens

    env = BabyAIEnv(level="GoToLocal", fold="dev")
    env.reset(seed=0)
    situation = env.situation()
    text = ("Mission: open the grey door\nIn view:\n- an open grey door 1 step ahead (0 moves away)\n"
            "Cells seen so far: 20.\nNearest unseen cell: none within reach.\nIn front of you: an open grey door.\n"
            "Walls: ahead none in view, left 1 step away, right 1 step away.\nYou carry nothing.")
    tokens = candidate_tokens(dataclasses.replace(situation, state_text=text))[0]
    assert "turn left|open|tgt:front" in tokens and "turn left|front:target" in tokens
    closed = text.replace("In view:\n", "In view:\n- a closed grey door 2 steps ahead, 1 to the left (3 moves away, "
                          "first move forward)\n")
    tokens = candidate_tokens(dataclasses.replace(situation, state_text=closed))[0]
    assert "turn left|open|tgt:left" in tokens and "turn left|way:other" in tokens
