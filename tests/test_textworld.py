"""s1/TextWorld-v0 on the real engine: TextWorld's generator, jericho's interpreter, TextWorld's tracker.

Games are generated once into s1gym's cache (the first run of this file generates four, a few seconds
each); every later run loads them.
"""

from __future__ import annotations

import random

import gymnasium as gym
import pytest

pytest.importorskip("textworld", reason="the textworld extra is not installed")

import textworld

import s1gym  # noqa: F401
from s1gym.tasks.textworld.env import HYGIENE_VERBS, TextWorldEnv
from s1gym.tasks.textworld.games import CHALLENGES, make_game, spec_for

#: train seed -> challenge (seed mod 4 picks it)
SEEDS = dict(zip(range(4), CHALLENGES, strict=True))
pytestmark = pytest.mark.filterwarnings("ignore::jericho.UnsupportedGameWarning")  # textworld.start's own
INFOS = textworld.EnvInfos(admissible_commands=True, policy_commands=True, score=True, max_score=True,
                           won=True, lost=True, description=True, inventory=True, feedback=True)


@pytest.fixture(scope="session")
def games():
    """The four train games of seeds 0-3, generated once (cached on disk across runs)."""
    return {seed: make_game(spec_for(seed, "train", None, "medium")) for seed in SEEDS}


def make(**options) -> TextWorldEnv:
    return gym.make("s1/TextWorld-v0", **options)


def test_seed_picks_the_challenge_and_the_observation_shows_goal_room_inventory_score(games):
    env = make()
    for seed, challenge in SEEDS.items():
        obs, info = env.reset(seed=seed)
        assert info["challenge"] == challenge and info["game_seed"] == seed
        assert obs.startswith("Goal: ") and "\n\nRoom: -= " in obs and "\n\nInventory: " in obs
        assert "Score: 0 of " in obs and "Moves: 0." in obs
        assert obs.endswith("Moves: " + ", ".join(info["candidates"]))
        assert info["score"] == 0.0 and not info["won"] and not info["lost"]


def test_candidates_are_textworlds_admissible_commands_sorted_without_the_hygiene_verbs(games):
    env = make()
    for seed in SEEDS:
        _, info = env.reset(seed=seed)
        tw = textworld.start(str(games[seed]), INFOS)
        state = tw.reset()
        assert sorted(info["candidates"]) == info["candidates"]
        kept = [c for c in state["admissible_commands"]
                if c.split(" ", 1)[0] not in HYGIENE_VERBS or c == "examine cookbook"]
        assert info["candidates"] == kept
        full = make(hygiene=False)
        assert full.reset(seed=seed)[1]["candidates"] == state["admissible_commands"]
        tw.close()


def test_the_expert_wins_every_challenge_with_textworlds_score(games):
    env = make()
    for seed in SEEDS:
        _, info = env.reset(seed=seed)
        while not env.done:
            _, _, _, truncated, info = env.step_move(env.expert_action())
            assert not truncated
        assert info["won"] and not info["lost"] and info["score"] == 1.0, seed


def test_steps_match_textworld_start_along_a_random_path(games):
    """Feedback, score, won/lost and admissible commands equal textworld.start's, move by move."""
    rng = random.Random(7)
    for seed in SEEDS:
        env = make(hygiene=False)
        env.reset(seed=seed)
        tw = textworld.start(str(games[seed]), INFOS)
        tw.reset()
        for _ in range(12):
            if env.done:
                break
            move = rng.choice(env.candidates)
            _, _, _, _, info = env.step_move(move)
            state, score, _ = tw.step(move)
            play = env.unwrapped.play_state
            assert play.feedback == state["feedback"]
            assert play.score == score and info["won"] == state["won"] and info["lost"] == state["lost"]
            assert play.policy() == state["policy_commands"]
            if not env.done:
                assert info["candidates"] == state["admissible_commands"]
        tw.close()


def _trace(env, moves):
    out = []
    for m in moves:
        if env.done or m not in env.candidates:
            break
        obs, reward, term, trunc, info = env.step_move(m)
        out.append((obs, reward, term, trunc, info["candidates"], info["score"], env.state_key()))
    return out


def test_fork_is_exact_against_textworlds_env_copy(games):
    """After a random prefix: the fork and TextWorld's env.copy(), stepped alike, give the same feedback,
    score and admissible commands; the original, stepped after, is untouched by the fork's moves."""
    rng = random.Random(3)
    for seed in SEEDS:
        for _ in range(3):
            env = make(hygiene=False)
            env.reset(seed=seed)
            tw = textworld.start(str(games[seed]), INFOS)
            tw.reset()
            for _ in range(rng.randrange(0, 10)):
                if env.done:
                    break
                move = rng.choice(env.candidates)
                env.step_move(move)
                tw.step(move)
            if env.done:
                continue
            fork, twin = env.fork(), tw.copy()
            moves = [rng.choice(env.candidates) for _ in range(1)]
            for _ in range(8):
                if fork.done:
                    break
                move = rng.choice(fork.candidates)
                moves.append(move)
                fork.step_move(move)
                state, score, _ = twin.step(move)
                assert fork.play_state.feedback == state["feedback"]
                assert fork.play_state.score == score
                if not fork.done:
                    assert list(fork.candidates) == state["admissible_commands"]
            replay = make(hygiene=False)
            replay.reset(seed=seed)
            for m, _ in env.history:
                replay.step_move(m)
            assert _trace(env, moves) == _trace(replay, moves)
            tw.close()


def test_a_fork_stepped_away_leaves_the_original_identical(games):
    env = make()
    env.reset(seed=1)
    env.step_move(env.expert_action())
    before = (env.situation().observation, env.state_key(), env.candidates)
    fork = env.fork()
    while not fork.done:
        fork.step_move(fork.expert_action())
    assert fork.won and (env.situation().observation, env.state_key(), env.candidates) == before
    assert not env.won


def test_the_expert_reads_the_cookbook_and_the_recipe_stays_in_the_observation(games):
    env = make()
    env.reset(seed=1)
    seen = []
    while not env.done:
        move = env.expert_action()
        seen.append(move)
        obs, *_ = env.step_move(move)
        if move == "examine cookbook":
            assert "Recipe (from the cookbook): " in obs
    assert "examine cookbook" in seen and "Recipe (from the cookbook): " in obs


def test_the_expert_recovers_after_a_deviation(games):
    env = make()
    env.reset(seed=3)  # coin collector: one step on the path, one back, then follow the expert
    env.step_move(env.expert_action())
    wrong = next(m for m in env.candidates if m != env.expert_action())
    env.step_move(wrong)
    while not env.done:
        env.step_move(env.expert_action())
    assert env.won


def test_options_are_checked_and_cache_dir_holds_the_games(tmp_path):
    with pytest.raises(ValueError, match="challenge must be one of"):
        make(challenge="tw-zork")
    with pytest.raises(ValueError, match="difficulty must be one of"):
        make(difficulty="insane")
    with pytest.raises(ValueError, match="fold must be one of"):
        make(fold="valid")
    env = make(challenge="tw-treasure_hunter", difficulty="easy", fold="test", cache_dir=str(tmp_path))
    _, info = env.reset(seed=0)
    assert info["challenge"] == "tw-treasure_hunter" and info["game_seed"] == 2_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "tw-treasure_hunter-easy-2000000.json", "tw-treasure_hunter-easy-2000000.z8"]
    with pytest.raises(ValueError, match="seed must be in"):
        env.reset(seed=1_000_000)


def test_the_registry_finds_the_fitted_model_and_it_plays(games):
    from s1gym.policies import Local

    from s1gym import registration

    assert registration.model_file("TextWorld").name == "local_textworld.json"
    env = make()
    env.reset(seed=2)
    decision = Local().decide(env.situation())
    assert len(decision.probabilities) == len(env.candidates)


def test_maskable_ppo_trains_on_textworld_and_only_ever_plays_legal_moves(games):
    """A MaskablePPO smoke on s1/TextWorld-v0 (coin collector, train seed 3, the text hashed): 128 PPO steps
    run, and every action taken, in training and in play, is one the mask allowed (an illegal one would
    raise here)."""
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    from s1gym.rl import EncodeText, HashedBagOfWords, play_episodes

    class OneGameLegalOnly(gym.Wrapper):
        """Every reset without a seed plays seed 3 (a cached game); every step checks the mask."""

        def __init__(self, env: gym.Env) -> None:
            super().__init__(env)
            self.steps = 0

        def action_masks(self) -> np.ndarray:
            return self.env.get_wrapper_attr("action_masks")()

        def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
            return self.env.reset(seed=3 if seed is None else seed, options=options)

        def step(self, action):  # type: ignore[no-untyped-def]
            assert self.action_masks()[int(action)] == 1, (int(action), self.action_masks())
            self.steps += 1
            return self.env.step(action)

    torch.set_num_threads(1)
    env = OneGameLegalOnly(EncodeText(make(max_steps=16), HashedBagOfWords(dim=256)))
    model = MaskablePPO("MlpPolicy", env, seed=0, n_steps=64, batch_size=32, n_epochs=2).learn(128)
    assert env.steps >= 128
    finals = play_episodes(env, model, [3])
    assert len(finals) == 1 and finals[0]["challenge"] == "tw-coin_collector" and finals[0]["steps"] <= 16


def test_the_model_reads_whether_the_meal_is_ready_and_whether_a_move_changes_nothing(games):
    """tw-cooking (train seed 1): ``prepare meal`` reads ``prepare|missing`` until the inventory holds every
    ingredient cut and cooked as the recipe says, then ``prepare|ready``; under Lookahead an early
    ``prepare meal`` (the game says what is still missing and nothing changes) reads ``out:same``."""
    from s1gym.policies import Uniform
    from s1gym.wrappers import Lookahead

    from s1gym.tasks.textworld.tokens import candidate_tokens

    env = make()
    env.reset(seed=1)
    seen = []
    while not env.done:
        situation, move = env.situation(), env.expert_action()
        if "prepare meal" in situation.texts and "\n\nRecipe (from the cookbook): " in situation.state_text:
            tokens = candidate_tokens(situation)[situation.texts.index("prepare meal")]
            ready = move == "prepare meal"
            seen.append(ready)
            assert ("prepare|ready" in tokens, "prepare|missing" in tokens) == (ready, not ready), tokens
            if seen == [False]:  # the game says what is missing and nothing changes: the move leads back here
                annotated, _, _ = Lookahead(Uniform()).annotate(situation)
                i = annotated.texts.index("prepare meal")
                assert "out:same" in candidate_tokens(annotated)[i] and annotated.candidates[i].revisits == 1
        env.step_move(move)
    assert env.won and seen[-1] and not all(seen)
