"""Local's ALFWorld pair model (s1gym.tasks.alfworld.model, its tokens in s1gym.tasks.alfworld.tokens) on the
real ALFWorld engine and its shipped fit."""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("alfworld", reason="the optional extra alfworld==0.4.2 is not installed")

import s1gym  # noqa: F401
from s1gym.policies import Local, Uniform
from s1gym.tasks.alfworld.model import ALFWorldModel
from s1gym.tasks.alfworld.goals import Target, context_tokens, goal_target, goal_words, memory
from s1gym.tasks.alfworld.tokens import situation_pairs
from s1gym.policies.local import progress_heuristic, task_model
from s1gym.wrappers import Lookahead

SHARED = Path(os.environ.get("S1GYM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def soap():
    """The shipped scene 'put some soapbar on cabinet', after taking the soap from the toilet."""
    e = gym.make("s1/ALFWorld-v0", hygiene=True)
    e.reset(seed=1)
    e.step(e.index_of("go to toilet 1"))
    e.step(e.index_of("take soapbar 1 from toilet 1"))
    yield e
    e.close()


class Refuses:
    """An embedder that fails the test if anything is embedded."""

    def embed(self, texts):
        raise AssertionError(f"Local embedded {len(texts)} texts on a task whose model weighs no embedding")


def test_tokens_say_what_the_player_did_holds_and_would_see(soap):
    s = soap.unwrapped.situation()
    assert goal_words(s.state_text) == {"soapbar", "cabinet"}
    context = context_tokens(s)
    assert {"hold:g", "at:x", "did:take+g", "seen:g", "g:soapbar", "g:cabinet"} <= set(context)
    annotated, _, _ = Lookahead(Uniform()).annotate(s)
    by_move = dict(zip(annotated.texts, situation_pairs(annotated), strict=True))
    cabinet = set(by_move["go to cabinet 1"])
    # Going to a cabinet names a goal word and opens a move on it; the goal's words pair with the thing named.
    assert {"hold:g|v:go+g1", "hold:g|new:open+g1", "g:cabinet|o:cabinet", "g:soapbar|v:go"} <= cabinet
    assert "hold:g|v:move+held" in by_move["move soapbar 1 to toilet 1"]
    assert not any("|o:" in p and not p.startswith("g:") for p in cabinet)  # things pair with goal words only


def test_tokens_count_what_was_placed_of_two_and_remember_where_the_other_one_lies():
    """The shipped scene 'put two pencil in desk': after the first pencil is on the desk, the model sees one
    placed, that taking it back undoes it, and (once seen) where the second one lies."""
    e = gym.make("s1/ALFWorld-v0", hygiene=True)
    try:
        e.reset(seed=5)
        s = e.unwrapped.situation()
        assert goal_target(s.state_text) == Target("pencil", "desk", 2)
        assert "two:0" in context_tokens(s) and "seen:free" not in context_tokens(s)
        for move in ("go to shelf 1", "take pencil 2 from shelf 1", "go to desk 1", "move pencil 2 to desk 1"):
            e.step(e.index_of(move))
        s = e.unwrapped.situation()
        assert memory(s.history, goal_target(s.state_text)).placed == {"pencil 2"}
        assert "two:1" in context_tokens(s) and "seen:free" not in context_tokens(s)
        annotated, _, _ = Lookahead(Uniform()).annotate(s)
        by_move = dict(zip(annotated.texts, situation_pairs(annotated), strict=True))
        assert "two:1|v:take+placed" in by_move["take pencil 2 from desk 1"]
        assert "two:1|out:free" in by_move["go to bed 1"]  # the bed shows pencil 1, not the placed one
        assert "two:1|out:free" not in by_move["go to shelf 1"]
        for move in ("go to bed 1", "go to shelf 1"):
            e.step(e.index_of(move))
        s = e.unwrapped.situation()
        assert {"two:1", "seen:free"} <= set(context_tokens(s))
        by_move = dict(zip(s.texts, situation_pairs(s), strict=True))
        assert "two:1|v:go+seen" in by_move["go to bed 1"] and "two:1|v:go+seen" not in by_move["go to desk 1"]
        e.step(e.index_of("go to bed 1"))
        s = e.unwrapped.situation()
        by_move = dict(zip(s.texts, situation_pairs(s), strict=True))
        assert "two:1|v:go+searched" in by_move["go to shelf 1"]  # seen empty (its pencil is on the desk)
        assert not any(p.endswith("+searched") for p in by_move["go to desk 1"] + by_move["go to drawer 1"])
        e.step(e.index_of("take pencil 1 from bed 1"))
        s = e.unwrapped.situation()
        assert memory(s.history, goal_target(s.state_text)).held == {"pencil 1"}
        assert "seen:free" not in context_tokens(s)
    finally:
        e.close()


def test_scores_are_sums_of_known_pair_weights_and_survive_a_round_trip(soap, tmp_path):
    s = soap.unwrapped.situation()
    model = ALFWorldModel({"hold:g|v:go+g1": 2.0, "hold:g|v:move+held": -1.0, "never|seen": 9.0},
                      dense={"played": -0.5}, progress={"*": 3.0, "hold:g": -2.0}, provenance={"name": "t"})
    scores = model.scores(s)
    expected = [2.0 if t.startswith("go to cabinet") else -1.0 if t.startswith("move") else 0.0 for t in s.texts]
    assert scores.tolist() == expected
    assert model.remaining(s) == 1.0
    model.save(tmp_path / "m.json")
    again = ALFWorldModel.load(tmp_path / "m.json")
    assert again.scores(s).tolist() == expected and again.remaining(s) == 1.0 and again.provenance == {"name": "t"}


def test_local_adds_the_pair_scores_and_names_its_model(soap, tmp_path):
    s = soap.unwrapped.situation()
    model = ALFWorldModel({"hold:g|v:go+g1": 6.0}, provenance={"name": "cabinet lover"})
    local = Local(pairs=model, preload=False, embedder=Refuses())
    assert s.texts[local.decide(s).action].startswith("go to cabinet")
    assert local.options()["pairs"] == "cabinet lover"
    model.save(tmp_path / "m.json")
    from_path = Local(pairs=tmp_path / "m.json", preload=False, embedder=Refuses())
    assert np.allclose(from_path.decide(s).probabilities, local.decide(s).probabilities)
    assert Local(pairs=False, preload=False).options()["pairs"] is False
    with pytest.raises(ValueError, match=r"a fitted model \(an s1gym.models.fitted.FittedModel\), the path of its JSON file"):
        Local(pairs=3, preload=False)


def test_shipped_alfworld_model_embeds_nothing_and_estimates_progress(soap):
    model = task_model("ALFWorld")
    assert model is not None and model.provenance["games"] == 140 and model.weights
    s = soap.unwrapped.situation()
    d = Local(preload=False, embedder=Refuses()).decide(s)
    assert np.isclose(d.probabilities.sum(), 1.0)
    h = progress_heuristic("ALFWorld")
    start = gym.make("s1/ALFWorld-v0", hygiene=True)
    start.reset(seed=1)
    assert 0.0 <= h(s) < h(start.unwrapped.situation())  # holding the soap, fewer moves are left
    start.close()
    with pytest.raises(ValueError, match="no learned progress estimate for 'Quiz'.*ALFWorld"):
        progress_heuristic("Quiz")


@pytest.mark.skipif(not (SHARED / "alfworld" / "json_2.1.1" / "valid_seen").is_dir(),
                    reason=f"shared ALFWorld data not found at {SHARED / 'alfworld'} (set S1GYM_SHARED_DATA)")
def test_cross_validation_folds_keep_a_task_folder_together_and_cover_every_game(capsys, monkeypatch):
    from s1gym.tasks.alfworld import fit_states
    from s1gym.tasks.alfworld.env import TASK_TYPES, find_games, task_type_of
    from s1gym.tasks.alfworld.fit import main
    from s1gym.tasks.alfworld.fit_states import folds, task_folder

    games = find_games(str(SHARED / "alfworld"), "valid_seen")
    parts = folds(games)
    assert sorted(i for f in parts for i in f) == list(range(len(games)))
    fold_of_folder = {}
    for k, f in enumerate(parts):
        for i in f:
            assert fold_of_folder.setdefault(task_folder(games[i]), k) == k
        assert {task_type_of(games[i]) for i in f} == set(TASK_TYPES)  # stratified: every type in every fold
    assert max(map(len, parts)) - min(map(len, parts)) <= 2
    monkeypatch.setattr(fit_states, "SHARED", SHARED / "alfworld")
    main(["folds"])  # the fitting CLI (python -m s1gym.tasks.alfworld.fit folds) prints each fold's games
    assert [int(line.split()[1]) for line in capsys.readouterr().out.splitlines()] == list(map(len, parts))


def test_search_names_the_learned_progress_estimate():
    from s1gym.wrappers import Search

    search = Search(Local(preload=False), heuristic="progress", budget=30)
    assert search.options()["heuristic"] == "progress"  # a job config can record it, unlike a function
    e = gym.make("s1/ALFWorld-v0", hygiene=True)
    try:
        e.reset(seed=1)
        search.reset()
        while not e.unwrapped.done:
            *_, info = e.step(search.decide(e.unwrapped.situation()).action)
        assert info["won"]
    finally:
        e.close()
    with pytest.raises(ValueError, match="'progress' for the task's learned progress estimate"):
        Search(Local(preload=False), heuristic="learned")


def test_search_with_the_shipped_model_wins_every_shipped_scene():
    """The six scenes s1gym ships were written here, not taken from valid_seen: games the model never saw."""
    from s1gym.wrappers import Search

    e = gym.make("s1/ALFWorld-v0", hygiene=True)
    try:
        for seed in range(6):
            search = Search(Lookahead(Local(preload=False)), heuristic="progress", budget=10, episode_budget=150)
            e.reset(seed=seed)
            info = {}
            while not e.unwrapped.done:
                d = search.decide(e.unwrapped.situation())
                assert not d.give_up, f"scene {seed}: the search gave up"
                *_, info = e.step(d.action)
            assert info["won"] and e.unwrapped.steps <= 10, (seed, e.unwrapped.steps)
    finally:
        e.close()
