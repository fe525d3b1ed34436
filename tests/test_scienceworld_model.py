"""Local's fitted ScienceWorld model (issue 52): the shipped file loads with its progress estimate, the reader
names exact features on a real state (one real JVM game), Local with the model ranks the gold move first on a
named train state, the task type is read off the description's wording, malformed files are refused; a
candidate Lookahead stepped gets exact ``la:`` names, a plain state scores as the model before them did, and the
shipped file scores a real dev state as Lookahead shows it."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("scienceworld", reason="the scienceworld extra is not installed")

from s1gym import registration
from s1gym.core import Candidate, Situation
from s1gym.tasks.scienceworld.model import HELD_BACK, ScienceWorldModel
from s1gym.tasks.scienceworld.tokens import (
    candidate_tokens,
    feedback_template,
    focus_order,
    focus_places,
    focus_steps,
    progress_tokens,
    task_type,
)

#: the state the model is checked on: train variation 0 of boil after the gold path's first four moves
GOLD_PREFIX = 4
#: the shipped estimate of the moves left there (the mapped gold path plays 32 more)
PROGRESS_AT_BOIL_STATE = 27.118


@pytest.fixture(scope="module")
def boil_state():
    """Train variation 0 of ``boil`` (preset easy) after the gold path's first four moves (wait1 for the open
    door, go to kitchen, look around, pick up thermometer): the situation and the expert's next move."""
    from s1gym.tasks.scienceworld.env import ScienceWorldEnv

    env = ScienceWorldEnv(task="boil", fold="train")
    try:
        env.reset(seed=0)
        for _ in range(GOLD_PREFIX):
            env.step_move(env.expert_action())
        yield env.situation(), env.expert_action()
    finally:
        env.close()


def test_the_shipped_model_loads_with_its_progress_estimate_and_was_fitted_without_the_test_fold():
    model = registration.local_model("ScienceWorld")
    assert isinstance(model, ScienceWorldModel)
    assert model.weights and model.progress
    assert model.provenance["test"] == "fold test never used"
    assert model.provenance["train"].startswith("fold train") and model.provenance["dev"].startswith("fold dev")
    assert registration.progress_estimate("ScienceWorld") is not None
    # the types whose stated order of focuses binds, read off the train gold paths (fit order)
    assert model.ordered == {"chemistry-mix", "grow-plant", "measure-melting-point-known-substance",
                             "measure-melting-point-unknown-substance", "power-component",
                             "power-component-renewable-vs-nonrenewable-energy", "test-conductivity",
                             "test-conductivity-of-unknown-substances", "use-thermometer"}


def test_the_reader_names_exact_features_on_a_real_state(boil_state):
    situation, expert = boil_state
    assert [m for m, _ in situation.history] == ["wait1", "go to kitchen", "look around", "pick up thermometer"]
    assert expert == "open cupboard"
    tokens = dict(zip(situation.texts, candidate_tokens(situation), strict=True))
    # the thermometer: in hand, not named by the task, the object of the last move (a pick up)
    assert tokens["focus on thermometer"] == [
        "v:focus on", "boil|v:focus on", "pv:pick up|v:focus on", "boil|pv:pick up|v:focus on",
        "boil|v:focus on|foci:0", "v:focus on|task:ni", "boil|v:focus on|task:ni", "boil|v:focus on|task:ni|foci:0",
        "v:focus on|w:thermometer", "boil|v:focus on|w:thermometer", "boil|v:focus on|before:o",
        "pv:pick up|v:focus on|same",
        "boil|pv:pick up|v:focus on|same"]
    # the room one is in
    assert tokens["teleport to kitchen"] == [
        "v:teleport to", "boil|v:teleport to", "pv:pick up|v:teleport to", "boil|pv:pick up|v:teleport to",
        "boil|v:teleport to|foci:0", "v:teleport to|task:n", "boil|v:teleport to|task:n",
        "boil|v:teleport to|task:n|foci:0", "v:teleport to|w:kitchen", "boil|v:teleport to|w:kitchen",
        "boil|v:teleport to|before:o", "v:teleport to|here"]
    # a device the room shows switched off, a door
    assert tokens["activate stove"][-2:] == ["boil|v:activate|before:n", "boil|v:activate|switch:off"]
    assert "boil|v:go to|door" in tokens["go to door to hallway"]
    # a move played before, the last one
    assert tokens["look around"] == [
        "v:look around", "boil|v:look around", "pv:pick up|v:look around", "boil|pv:pick up|v:look around",
        "boil|v:look around|foci:0", "v:look around|played", "boil|v:look around|played"]
    assert progress_tokens(situation) == ["*", "boil", "boil|score:0", "boil|moves:0", "boil|foci:0",
                                          "boil|did:go to", "boil|did:look around", "boil|did:pick up",
                                          "boil|did:wait1"]


def test_local_with_the_fitted_model_ranks_the_gold_move_first_on_a_train_state(boil_state):
    from s1gym.policies import Local

    situation, expert = boil_state
    decision = Local(preload=False).decide(situation)
    assert situation.texts[int(decision.probabilities.argmax())] == expert


@pytest.mark.parametrize(("description", "kind"), [
    (("Your task is to boil water. For compounds without a boiling point, combusting the substance is also "
     "acceptable."), "boil"),
    ("Your task is to measure the melting point of mercury, which is located around the kitchen.",
     "measure-melting-point-known-substance"),
    (("Your task is to measure the melting point of solid unknown substance O, which is located around the "
     "kitchen."), "measure-melting-point-unknown-substance"),
    ("Your task is to turn on the blue light bulb by powering it using a renewable power source.",
     "power-component-renewable-vs-nonrenewable-energy"),
    ("Your task is to turn on the blue light bulb. First, focus on the blue light bulb.", "power-component"),
    ("Your task is to focus on the 4 life stages of the moth, starting from earliest to latest.",
     "identify-life-stages-1"),
    ("Your task is to focus on the life stages of the cherry plant, starting from earliest to latest.",
     "identify-life-stages-2"),
    (("Your task is to determine which of the two inclined planes (unknown material G, unknown material F) has "
     "the most friction."), "inclined-plane-friction-unnamed-surfaces"),
    ("Your task is to determine which of the two inclined planes (greenpaint, bronze) has the most friction.",
     "inclined-plane-friction-named-surfaces"),
    ("Your task is to find the animal with the longest life span, then the shortest life span.",
     "lifespan-longest-lived-then-shortest-lived"),
    ("Your task is to use chemistry to create the substance 'smores'.", "chemistry-mix"),
    ("Your task is to use chemistry to create orange paint. When you are done, focus on the orange paint.",
     "chemistry-mix-paint-secondary-color"),
    ("Your task is to sing a song.", "?"),
])
def test_the_task_type_is_read_off_the_descriptions_wording(description, kind):
    assert task_type(description) == kind


#: train variation 0 of measure-melting-point-unknown-substance, as the reader lower-cases it
MELTING = ("your task is to measure the melting point of solid unknown substance c, which is located around the "
           "kitchen. first, focus on the thermometer. next, focus on the solid unknown substance c. if the melting "
           "point of solid unknown substance c is above 150.0 degrees celsius, focus on the orange box. if the "
           "melting point of solid unknown substance c is below 150.0 degrees celsius, focus on the yellow box. the "
           "boxes are located around the kitchen.")


def test_the_tasks_focus_instructions_are_read_in_order_with_if_alternatives_sharing_a_step():
    assert focus_steps(MELTING) == (("thermometer", 0), ("solid unknown substance c", 1), ("orange box", 2),
                                    ("yellow box", 2))
    assert focus_steps("your task is to boil water. first, focus on the substance. then, take actions.") == (
        ("substance", 0),)
    # the second "if" of mendelian genetics is the first's alternative, not a later step
    assert focus_steps("your task is to determine whether tall plant height is dominant. if the trait is "
                       "dominant, focus on the red box. if the trait is recessive, focus on the green box.") == (
        ("red box", 0), ("green box", 0))


@pytest.mark.parametrize(("head", "done", "order"), [
    ("thermometer", 0, "next"), ("solid unknown substance c", 0, "later"), ("unknown substance c", 0, "later"),
    ("yellow box", 0, "later"), ("apple", 0, "none"), ("solid unknown substance c", 1, "next"),
    ("thermometer", 1, "earlier"), ("orange box", 2, "next"), ("yellow box", 2, "next"),
    ("solid unknown substance c", 2, "earlier"),
])
def test_a_focus_reads_where_the_tasks_instructions_put_its_object(head, done, order):
    assert focus_order(head, MELTING, done) == order


def _melting(*focused: str, moves: tuple[str, ...] = ("focus on thermometer", "focus on solid unknown substance c",
                                                     "focus on stove", "pick up thermometer"),
             score: float = 0.0) -> Situation:
    """A measure-melting-point state after focusing on ``focused`` (by default three focuses and a move that is
    none on offer)."""
    text = f"Task Description:\n{MELTING}\n\nThis room is called the kitchen. In it, you see: \n\tthe agent"
    return Situation(task="ScienceWorld", observation=text, candidates=tuple(Candidate(m) for m in moves),
                     history=tuple((m, "You focus on it.") for m in focused), state_text=text, score=score)


def test_a_focus_the_task_does_not_put_next_is_out_of_order_while_a_step_is_to_come():
    assert focus_places(_melting()).out_of_order == [False, True, True, False]  # the thermometer first
    assert focus_places(_melting("focus on thermometer")).out_of_order == [True, False, True, False]
    # both boxes are the third step: after it no step is to come, and no focus is held back
    assert focus_places(_melting("focus on thermometer", "focus on solid unknown substance c",
                                 "focus on orange box")).out_of_order == [False, False, False, False]


def test_the_model_holds_back_an_out_of_order_focus_only_on_the_types_whose_order_binds(tmp_path):
    weights = {"v:focus on": 2.0, "v:pick up": 1.0}
    situation = _melting()
    binding = ScienceWorldModel(weights, ordered=frozenset({"measure-melting-point-unknown-substance"}))
    assert binding.scores(situation).tolist() == [2.0, 2.0 + HELD_BACK, 2.0 + HELD_BACK, 1.0]
    assert ScienceWorldModel(weights, ordered=frozenset({"boil"})).scores(situation).tolist() == [2.0, 2.0, 2.0, 1.0]
    binding.save(tmp_path / "m.json")
    assert ScienceWorldModel.load(tmp_path / "m.json").ordered == binding.ordered
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**binding.to_json(), "ordered": "use-thermometer"}))
    with pytest.raises(ValueError, match="'ordered' must be a list of ScienceWorld task names.*fit order"):
        ScienceWorldModel.load(bad)


def test_a_guess_between_the_tasks_alternatives_is_held_back_while_the_score_so_far_is_worth_more():
    boxes = ("focus on orange box", "focus on yellow box", "focus on stove", "wait1")
    model = ScienceWorldModel({"v:focus on": 2.0}, ordered=frozenset({"measure-melting-point-unknown-substance"}))
    focused = ("focus on thermometer", "focus on solid unknown substance c")
    assert focus_places(_melting(*focused, moves=boxes)).alternatives == [2, 2, 0, 0]
    # the substance is next, the one object of its step; before it, the thermometer is
    assert focus_places(_melting(focused[0], moves=boxes)).alternatives == [0, 0, 0, 0]
    assert focus_places(_melting()).alternatives == [0, 0, 0, 0]
    # a pick between two boxes is worth about 1/2: played at a score of 0.5, held back above it
    assert model.scores(_melting(*focused, moves=boxes, score=0.5)).tolist() == [2.0, 2.0, 2.0 + HELD_BACK, 0.0]
    assert model.scores(_melting(*focused, moves=boxes, score=0.81)).tolist() == [2.0 + HELD_BACK] * 3 + [0.0]


def test_a_type_binds_when_its_train_gold_focuses_are_all_in_the_stated_order():
    from s1gym.tasks.scienceworld.fit import ORDER_MIN_FOCI, ordered_types

    thermometer_first = (_melting(), 0)  # the gold focus in order
    substance_first = (_melting(), 1)  # out of order
    not_a_focus = (_melting(), 3)
    games = [{"states": [thermometer_first, not_a_focus] * ORDER_MIN_FOCI}]
    assert ordered_types(games) == (frozenset({"measure-melting-point-unknown-substance"}),
                                    {"measure-melting-point-unknown-substance": (5, 5)})
    assert ordered_types([{"states": [thermometer_first] * (ORDER_MIN_FOCI - 1)}])[0] == frozenset()
    assert ordered_types(games + [{"states": [substance_first]}]) == (
        frozenset(), {"measure-melting-point-unknown-substance": (5, 6)})


def test_a_situation_without_a_scienceworld_observation_reads_as_an_unknown_task_type():
    situation = Situation(task="ScienceWorld", observation="", candidates=(Candidate("wait1"),))
    assert candidate_tokens(situation) == [["v:wait1", "?|v:wait1", "pv:^|v:wait1", "?|pv:^|v:wait1",
                                            "?|v:wait1|foci:0"]]


def test_malformed_model_files_are_refused_with_a_clear_error(tmp_path):
    shipped = json.loads(registration.model_file("ScienceWorld").read_text())
    wrong_version = tmp_path / "v99.json"
    wrong_version.write_text(json.dumps({**shipped, "features_version": 99}))
    with pytest.raises(ValueError, match="not a scienceworld model of features version 1.*refit it"):
        registration.load_model(wrong_version)
    unknown_kind = tmp_path / "kind.json"
    unknown_kind.write_text(json.dumps({**shipped, "kind": "sciencewrld"}))
    with pytest.raises(ValueError, match="model kind 'sciencewrld' is not one a family declares"):
        registration.load_model(unknown_kind)


def test_the_progress_estimate_reads_the_situation(boil_state):
    situation, _expert = boil_state
    estimate = registration.progress_estimate("ScienceWorld")
    model = registration.local_model("ScienceWorld")
    tokens = progress_tokens(situation)
    expected = max(0.0, model.progress["*"] + sum(model.progress.get(t, 0.0) for t in tokens if t != "*"))
    assert estimate(situation) == pytest.approx(expected, abs=1e-9)
    assert estimate(situation) == pytest.approx(PROGRESS_AT_BOIL_STATE, abs=1e-3)


#: the shipped model's logits of five moves of the boil state, as the model without lookahead names (features
#: version 1, the refit of arm K: sha256 7f1533cb... of data/local_scienceworld.json, and 4076105e... since its la:
#: weights were refitted on it, the plain weights unchanged) scored them: the lookahead names change none.
#: ``look around`` (the gold path's no-op, now taught as the move after it) is far behind.
PLAIN_SCORES = {"open cupboard": 11.6555, "focus on thermometer": -0.5801, "teleport to kitchen": -2.74,
                "look around": 2.2401, "activate stove": 0.6013}

_NOW = ("Task Description:\nYour task is to boil water. First, focus on the substance.\n\nThis room is called the "
        "kitchen. In it, you see: \n\ta stove, which is turned {stove}.\n\ta sink, which is turned off.\n\n"
        "In your inventory, you see:\n\ta metal pot (containing water)")


def test_a_lookahead_candidate_with_a_positive_reward_gets_the_reward_token():
    now = _NOW.format(stove="off")
    situation = Situation(task="ScienceWorld", observation=now, state_text="You move to the kitchen.\n\n" + now,
                          history=(("go to kitchen", "You move to the kitchen."),), candidates=(
        Candidate("activate stove", outcome="The stove is now activated.\n\n" + _NOW.format(stove="on"),
                  new_actions=("deactivate stove",), reward=0.1, revisits=0),
        Candidate("pick up stove", outcome="No known action matches that input.\n\n" + now, reward=0.0, revisits=1),
        Candidate("look around"),
    ))
    plain = candidate_tokens(situation.with_candidates([Candidate(c.text) for c in situation.candidates]))
    tokens = candidate_tokens(situation)
    assert [t[:len(p)] for t, p in zip(tokens, plain, strict=True)] == plain  # the plain names first, unchanged
    assert [t[len(p):] for t, p in zip(tokens, plain, strict=True)] == [
        ["la:fb:* now activated", "la:boil|fb:* now activated", "la:v:activate|fb:* now activated",
         "la:r:+", "la:r:+m", "la:boil|r:+", "la:v:activate|r:+",
         "la:rev:0", "la:boil|rev:0", "la:v:activate|rev:0", "la:new:1-2", "la:boil|new:1-2"],
        ["la:fb:no known action matches", "la:boil|fb:no known action matches",
         "la:v:pick up|fb:no known action matches", "la:rev:1", "la:boil|rev:1", "la:v:pick up|rev:1",
         "la:same", "la:v:pick up|same", "la:new:0", "la:boil|new:0"],
        [],  # no outcome: no lookahead names
    ]
    assert feedback_template("You decide to wait for 10 iterations.", "wait1") == "decide wait for #"
    assert feedback_template("You decide to wait for 10 iterations.", "wait") == "decide * for #"
    assert feedback_template("", "look around") == "-"


def test_a_plain_state_scores_exactly_as_the_model_without_lookahead_names(boil_state):
    situation, _expert = boil_state
    assert not any(n.startswith("la:") for names in candidate_tokens(situation) for n in names)
    model = registration.local_model("ScienceWorld")
    scores = model.scores(situation)
    assert {t: round(float(scores[situation.texts.index(t)]), 4) for t in PLAIN_SCORES} == PLAIN_SCORES


@pytest.fixture(scope="module")
def dev_lookahead_state():
    """Dev variation 0 of ``boil`` after the expert's first five moves (the fifth the gold path's ``look around``,
    a no-op the fit teaches as the move after it), annotated as ``Lookahead(Local, width=16)`` shows it, and the
    expert's next move."""
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    from s1gym.tasks.scienceworld.env import ScienceWorldEnv

    env = ScienceWorldEnv(task="boil", fold="dev")
    try:
        env.reset(seed=0)
        for _ in range(GOLD_PREFIX + 1):
            env.step_move(env.expert_action())
        situation = env.situation()
        lookahead = Lookahead(Local(preload=False), width=16)
        (shown, _first), = lookahead._shortlists([situation])
        annotated, _kept, _losing = lookahead.annotate(situation, shown)
        yield annotated, env.expert_action()
    finally:
        env.close()


def test_the_shipped_file_scores_a_dev_state_as_lookahead_shows_it(dev_lookahead_state):
    annotated, expert = dev_lookahead_state
    model = registration.local_model("ScienceWorld")
    assert model.features_version == 1 and model.provenance["lookahead"]["test"] == "fold test never used"
    assert 1 < len(annotated.candidates) <= 16 and expert in annotated.texts
    names = candidate_tokens(annotated)
    assert all(any(n.startswith("la:fb:") for n in fs) for fs in names)  # every shown move read with its outcome
    # a `focus on` the planning fork did not play (an answer) has no revisit count; every other move has one
    assert [any(n.startswith("la:rev:") for n in fs) for fs in names] == [
        not t.startswith("focus on ") for t in annotated.texts]
    assert sum(t.startswith("focus on ") for t in annotated.texts) == 2  # focus on ice cream, on the metal pot
    la = [sum(model.weights.get(n, 0.0) for n in fs if n.startswith("la:")) for fs in names]
    assert any(w != 0.0 for w in la)  # the lookahead names weigh
    scores = model.scores(annotated)
    plain = model.scores(annotated.with_candidates([Candidate(c.text) for c in annotated.candidates]))
    assert scores == pytest.approx(plain + la, abs=1e-9)
    assert annotated.texts[int(scores.argmax())] == expert


def test_the_tables_rethink_row_plans_on_stalls_with_lookaheads_width():
    """The second table's composed row (issue 52's loops, docs/benchmarks.md "Lookahead's loops"): Rethink with
    the fork planner around lookahead(local), both stepping Local's 16 favourites a state (a plan's search would
    otherwise step every one of a node's hundreds of moves)."""
    from s1gym.policies import Local
    from s1gym.wrappers import ForkPlanner, Lookahead, Rethink, wrap

    from s1gym.tasks.scienceworld.bench import FULL_TABLE_POLICIES

    base, wrappers, options, cap = FULL_TABLE_POLICIES["rethink(lookahead(local))"]
    policy = wrap(Local(preload=False), list(wrappers), **options)
    assert (base, cap) == ("local", 1500.0) and policy.name == "rethink(lookahead(local))"
    assert isinstance(policy, Rethink) and isinstance(policy.policy, Lookahead) and policy.policy.width == 16
    assert isinstance(policy.planner, ForkPlanner) and policy.planner.width == 16 and policy.planner.budget == 50
    assert policy.progress == "best" and policy.stall_patience("s1/ScienceWorld-v0") == 10
    assert policy.options() == {"planner": "search", "plan_width": 16}


def test_a_game_capped_in_calls_gives_up_once_its_decisions_made_them_and_drops_the_searchs_time_limit():
    """``bench table2/gate --game-calls N``: a game ends at the first decision after its decisions made N policy
    calls (not after 120 s), and the searches play without ``max_seconds``, so the moves are the machine's
    no more."""
    import math

    import numpy as np

    from s1gym.core import BasePolicy, Decision, Usage
    from s1gym.tasks.scienceworld.bench import _GameCap, full_table

    class ThreeCalls(BasePolicy):
        name = "three-calls"

        def decide(self, situation):
            return Decision(np.array([0.0, 1.0]), 1, Usage(calls=3))

    situation = Situation(task="ScienceWorld", observation="", candidates=(Candidate("a"), Candidate("b")))
    capped = _GameCap(ThreeCalls(), math.inf, calls=6)
    for _game in range(2):  # a reset starts the count again
        capped.reset()
        decisions = [capped.decide(situation) for _ in range(4)]
        assert [d.give_up for d in decisions] == [False, False, True, True]  # 3 and 6 calls made, then the cap
        assert decisions[-1].probabilities.tolist() == [0.5, 0.5] and capped.capped and capped.spent == 6
    table = full_table(("search(local)",), tasks=(), game_calls=500, log=lambda *a, **k: None)
    assert (table["game_cap_calls"], table["game_cap_s"]) == (500, math.inf)
    assert table["search"]["search(local)"] == {"width": 16, "budget": 8, "stall_share": 0.5}
    assert full_table(("search(local)",), tasks=(), log=lambda *a, **k: None)["search"]["search(local)"][
        "max_seconds"] == 20.0


#: (roll-in, states, departures, the expert's replans, won) of the learner roll-in below with the shipped model
LEARNER_GAME = ("dagger", 22, 12, 11, True)


def test_a_learner_roll_in_departs_from_the_expert_and_is_seeded():
    """The fit's learner roll-in (DAgger with the shipped model): on train variation 8 of test-conductivity it
    leaves the expert's plan (the expert replans) and still wins, it is seeded (a second collect gives the same
    states and labels), it starts where the gold roll-in starts but does not follow it, and the gold roll-in of
    the same game departs nowhere."""
    from s1gym.tasks.scienceworld.fit import OUT, collect

    learner = ScienceWorldModel.load(OUT)
    game, again = (collect("train", (8,), ("test-conductivity",), log=False, learner=learner)[0] for _ in range(2))
    gold = collect("train", (8,), ("test-conductivity",), log=False)[0]
    assert (game["rollin"], len(game["states"]), game["departures"], game["replans"], game["won"]) == LEARNER_GAME
    assert (gold["rollin"], gold["departures"], gold["replans"], gold["won"]) == ("gold", 0, 0, True)
    labels = [(s.observation, s.texts[good]) for s, good in game["states"]]
    assert labels == [(s.observation, s.texts[good]) for s, good in again["states"]]
    assert labels[:1] == [(s.observation, s.texts[good]) for s, good in gold["states"][:1]]  # the same start
    assert [m for _, m in labels] != [s.texts[good] for s, good in gold["states"]]  # but not the gold path


def test_spread_train_seeds_reach_the_objects_a_types_first_seeds_never_show():
    """``fit --spread``: four seeds spread over test-conductivity's 450 train variations, the first and the last
    among them, show four objects; its first four (the seeds every fit played before) are all aluminum foil."""
    from s1gym.tasks.scienceworld.env import ScienceWorldEnv
    from s1gym.tasks.scienceworld.fit import spread_seeds

    seeds = spread_seeds("test-conductivity", "train", 4)
    assert seeds == (0, 150, 299, 449)
    env = ScienceWorldEnv(task="test-conductivity", fold="train")
    try:
        def objects(chosen: tuple[int, ...]) -> list[str]:
            return [re.search(r"determine if (.+?) is electrically", env.reset(seed=s)[0]).group(1) for s in chosen]

        assert objects((0, 1, 2, 3)) == ["aluminum foil"] * 4
        assert objects(seeds) == ["aluminum foil", "book (The Foundations of the Origin of Species)", "glass jar",
                                  "metal pot"]
    finally:
        env.close()


def _seen(view: str, moves: tuple[str, ...], feedback: str = "") -> Situation:
    """A state showing ``view`` (a room's text) after ``feedback``, with ``moves`` on offer."""
    text = f"{feedback}\n\nTask Description:\nYour task is to find a(n) animal.\n\n{view}".lstrip()
    return Situation(task="ScienceWorld", observation=text, candidates=tuple(Candidate(m) for m in moves),
                     state_text=text)


def test_a_gold_no_op_is_taught_as_the_move_the_path_makes_after_it():
    from s1gym.tasks.scienceworld.fit import skip_no_ops

    hall = "This room is called the hallway."
    outside = "This room is called the outside. In it, you see: \n\tan egg turtle"
    hatched = "This room is called the outside. In it, you see: \n\ta hatchling turtle"
    moves = ("look around", "focus on egg turtle", "go to hallway", "wait1")
    ways = ("look around", "go to outside", "wait1")
    states = [(_seen(hall, ways), 2),  # wait1 for a door that is open
              (_seen(hall, ways, "The door is already open."), 1),
              (_seen(outside, moves, "You move to the outside."), 0),  # look around, then ...
              (_seen(outside, moves, "This room is called the outside."), 3),  # ... a wait: the same view
              (_seen(outside, moves), 3),  # a wait whose end the next state shows: kept
              (_seen(hatched, ("look around", "focus on hatchling turtle")), 1)]
    labels = [s.texts[good] for s, good in skip_no_ops(states)]
    assert labels == ["go to outside", "go to outside", "wait1", "wait1", "wait1", "focus on hatchling turtle"]
    # the run of two no-ops takes the move after it; a move the state does not offer is not taught there
    states[4] = (_seen(outside, moves), 1)
    assert [s.texts[g] for s, g in skip_no_ops(states)][2:5] == ["focus on egg turtle"] * 3
    # a move that is not a no-op keeps its label though nothing it does shows (a focus)
    focus_then_wait = [(_seen(outside, moves), 1), (_seen(outside, moves, "You focus on the egg turtle."), 3)]
    assert [s.texts[g] for s, g in skip_no_ops(focus_then_wait + states[5:])] == [
        "focus on egg turtle", "wait1", "focus on hatchling turtle"]
    assert [s.texts[g] for s, g in skip_no_ops(states[2:4])] == ["wait1", "wait1"]  # the last two states
    # a wait the next state shows the end of stays, though the move after it is on offer here too
    ended = [(_seen(outside, moves), 3), (_seen(hatched, moves), 1)]
    assert [s.texts[g] for s, g in skip_no_ops(ended)] == ["wait1", "focus on egg turtle"]
    states[2] = (_seen(outside, ("look around", "wait1"), "You move to the outside."), 0)
    assert [s.texts[g] for s, g in skip_no_ops(states)][2:5] == ["look around", "focus on egg turtle",
                                                               "focus on egg turtle"]


def test_a_task_types_focus_word_is_a_column_when_wrong_answers_name_it_too():
    from s1gym.tasks.scienceworld.fit import vocabulary

    longest = "lifespan-longest-lived|v:focus on|w:"
    # three games offer the mouse beside the bear; the gold move is the bear's
    state = [[f"{longest}bear", "v:focus on|w:bear"], [f"{longest}mouse", "v:focus on|w:mouse", "v:focus on"],
             ["v:go to|w:kitchen"]]
    games = [{"states": [(None, 0)]}] * 3
    vocab = vocabulary(games, [[state]] * 3, min_games=3, common_games=60)
    assert {f"{longest}bear", f"{longest}mouse", "v:focus on|w:bear", "v:focus on"} <= vocab
    # words of the other verbs and of every type at once still need a gold move (or 60 games)
    assert "v:focus on|w:mouse" not in vocab and "v:go to|w:kitchen" not in vocab
    assert f"{longest}mouse" not in vocabulary(games[:2], [[state]] * 2, min_games=3, common_games=60)
