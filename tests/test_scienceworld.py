"""s1/ScienceWorld-v0 on the real simulator (one JVM for the module): options, the seed-to-game map, the
candidate narrowing and the gold map, the expert, forks against a replay."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("scienceworld", reason="the scienceworld extra is not installed")

from s1gym.policies import Rule

import s1gym  # noqa: F401
from s1gym.runner.episode import play_episode
from s1gym.tasks.scienceworld.candidates import ambiguity_answers, gold_candidate, narrow, narrow_ids, verb_of
from s1gym.tasks.scienceworld.env import TASKS, ScienceWorldEnv


def make(**options) -> ScienceWorldEnv:
    return gym.make("s1/ScienceWorld-v0", **options)


# ---------------------------------------------------------------------------------------- no JVM
def test_the_thirty_task_types_in_scienceworlds_order():
    assert len(TASKS) == 30 and TASKS[0] == "boil" and TASKS[1] == "melt" and TASKS[-1] == "mendelian-genetics-unknown-plant"
    assert len(set(TASKS)) == 30


@pytest.mark.parametrize(("options", "named"), [
    ({"task": "boiling"}, "unknown task 'boiling'"),
    ({"fold": "validation"}, "fold must be one of"),
    ({"simplifications": "easy,teleport"}, "unknown simplifications \\['teleport'\\]"),
])
def test_bad_options_are_refused_with_the_fix(options, named):
    with pytest.raises(ValueError, match=named):
        ScienceWorldEnv(**options)


def test_the_gold_map_reads_scienceworlds_other_wordings():
    cands = ["look around", "look at substance in metal pot", "look at metal pot", "put down thermometer",
             "use thermometer on substance in metal pot", "use thermometer on metal pot",
             "connect black wire terminal 1 to anode in battery", "wait1"]
    assert gold_candidate("examine substance in metal pot", cands) == "look at substance in metal pot"
    assert gold_candidate("drop thermometer", cands) == "put down thermometer"
    assert gold_candidate("use thermometer in inventory on substance in metal pot", cands) == \
        "use thermometer on substance in metal pot"
    # a connection has no direction; the gold names the battery's anode the other way round
    assert gold_candidate("connect battery anode to black wire terminal 1", cands) == \
        "connect black wire terminal 1 to anode in battery"
    # no-ops under the easy preset (doors start open) take one tick (look around takes none); an answer to
    # the ambiguity prompt: the move it answers was played already
    assert gold_candidate("open door to kitchen", cands) == "wait1"
    assert gold_candidate("0", cands) == "look around"
    assert gold_candidate("wait1", cands) == "wait1"
    assert gold_candidate("eat banana", cands) is None


def test_narrowing_keeps_moves_on_what_is_in_view_and_in_hand():
    # (text, template id, object ids, type ids); 47 thermometer, 24 cupboard (furniture), 4 container
    valid = [
        ("look around", 3, (), ()), ("inventory", 20, (), ()), ("task", 24, (), ()),
        ("put down thermometer", 22, (1,), (47,)), ("look in cupboard", 5, (2,), (24,)),
        ("look in pot", 5, (3,), (4,)), ("pick up pot", 21, (3,), (4,)),
        ("move thermometer to cupboard", 9, (1, 2), (47, 24)), ("move cupboard to pot", 9, (2, 3), (24, 4)),
        ("move pot to inventory", 9, (3, 0), (4, 1)), ("use thermometer on pot", 13, (1, 3), (47, 4)),
        ("use pot on thermometer", 13, (3, 1), (4, 47)), ("focus on pot", 11, (3,), (4,)),
        ("focus on metal pot", 11, (3,), (4,)),
    ]
    moves = narrow(valid, look="a pot (containing nothing)", inventory="a thermometer")
    assert moves == ["look around", "focus on pot", "pick up pot", "put down thermometer", "look in cupboard",
                     "look in pot", "move thermometer to cupboard",
                     "use thermometer on pot", "wait1", "wait"]
    assert all(verb_of(m) for m in moves)


def test_the_gold_map_reads_an_objects_other_names():
    # the valid list names each object one way; ScienceWorld's parser knows it by all its names (referents)
    cands = ["look around", "read instructions to make salt water", "pick up ceramic cup containing apple seed",
             "pick up apple seed in seed jar containing apple seed", "focus on apple seed in cup containing apple seed",
             "focus on apple seed in flower pot", "connect aluminum foil to orange wire terminal 2",
             "connect aluminum foil to blue wire terminal 1", "wait1"]
    ids = {"read instructions to make salt water": (7,), "pick up ceramic cup containing apple seed": (1,),
           "pick up apple seed in seed jar containing apple seed": (2,),
           "focus on apple seed in cup containing apple seed": (2,), "focus on apple seed in flower pot": (3,),
           "connect aluminum foil to orange wire terminal 2": (5, 6),
           "connect aluminum foil to blue wire terminal 1": (5, 8)}
    refs = {7: ("recipe", "instructions to make salt water", "paper"), 1: ("seed jar", "ceramic cup", "cup"),
            2: ("apple seed", "seed"), 3: ("apple seed", "seed"), 5: ("aluminum foil",),
            6: ("orange wire terminal 2", "terminal 2"), 8: ("blue wire terminal 1", "terminal 1")}
    assert gold_candidate("read recipe in inventory", cands, ids, refs) == "read instructions to make salt water"
    assert gold_candidate("pick up seed jar", cands, ids, refs) == "pick up ceramic cup containing apple seed"
    # words alone pick the seed in the jar for the jar itself
    assert gold_candidate("pick up seed jar", cands) == "pick up apple seed in seed jar containing apple seed"
    # like objects: where the gold says it is decides (flower pot 1 is the flower pot in view)
    assert gold_candidate("focus on apple seed in flower pot 1", cands, ids, refs) == "focus on apple seed in flower pot"
    # a life stage the gold path expected before the object's name
    assert gold_candidate("focus on adult apple tree", ["focus on apple tree", "focus on cherry tree"],
                          {"focus on apple tree": (1,), "focus on cherry tree": (2,)},
                          {1: ("apple tree", "organism"), 2: ("cherry tree", "organism")}) == "focus on apple tree"
    # a terminal the valid list leaves out, named after its object: a connection to the object
    assert gold_candidate("connect aluminum foil terminal 1 to orange wire terminal 2", cands, ids, refs) == \
        "connect aluminum foil to orange wire terminal 2"


def test_the_answers_to_scienceworlds_ambiguity_prompt():
    prompt = ("Ambiguous request: Please enter the number for the action you intended (or blank to cancel):\n"
              "0:\tmove apple seed (in seed jar, in inventory) to flower pot 3 (in greenhouse)\n"
              "1:\tmove apple seed (in seed jar, in inventory) to flower pot 3 (in greenhouse)")
    assert ambiguity_answers(prompt) == ["0", "1"]
    assert ambiguity_answers("You move the apple seed to the flower pot 3.") == []
    assert gold_candidate("0", ["0", "1", "look around"]) == "0"


def test_narrowing_keeps_answers_moved_to_a_box_and_parts_connected_to_a_pole():
    # 215 answer box, 24 cupboard (furniture), 4 container, 134 aluminum foil, 75 terminal, 47 thermometer
    valid = [
        ("look in red box", 5, (9,), (215,)), ("look in pot", 5, (3,), (4,)), ("look in jar", 5, (4,), (4,)),
        ("pick up pot", 21, (3,), (4,)), ("pick up jar", 21, (4,), (4,)), ("pick up aluminum foil", 21, (5,), (134,)),
        ("pick up thermometer", 21, (1,), (47,)),
        ("move cupboard to red box", 9, (2, 9), (24, 215)), ("move cupboard to pot", 9, (2, 3), (24, 4)),
        ("move thermometer to pot", 9, (1, 3), (47, 4)), ("move jar to pot", 9, (4, 3), (4, 4)),
        ("move thermometer to aluminum foil", 9, (1, 5), (47, 134)),
        ("connect aluminum foil to wire terminal 1", 15, (5, 6), (134, 75)),
        ("connect wire terminal 1 to aluminum foil", 15, (6, 5), (75, 134)),
        ("connect cupboard to aluminum foil", 15, (2, 5), (24, 134)),
        ("connect cupboard to wire terminal 1", 15, (2, 6), (24, 75)),
    ]
    moves = narrow_ids(valid)
    assert [m for m in moves if m.startswith(("move", "connect"))] == [
        "move cupboard to red box", "move jar to pot", "move thermometer to pot",
        "connect aluminum foil to wire terminal 1"]
    assert moves["connect aluminum foil to wire terminal 1"] == (5, 6) and moves["move jar to pot"] == (4, 3)
    assert list(moves) == narrow(valid)
    # over a cap, the widened moves go from the end of the list first (the connection, then the last move)
    assert [m for m in narrow(valid, cap=len(moves) - 2) if m.startswith(("move", "connect"))] == [
        "move cupboard to red box", "move jar to pot"]


# ------------------------------------------------------------------------------------ on the JVM
def test_seed_picks_task_and_variation_and_the_game_starts_with_load_alone():
    env = make()
    obs, info = env.reset(seed=31)  # no task: TASKS[31 % 30], the second train variation
    assert info["task"] == TASKS[1] and info["steps"] == 0 and env.history == ()
    assert obs.startswith("Task Description:") and "This room is called" in obs
    assert info["score"] == 0.0 and not env.done
    first = env.engine().folds(TASKS[1], "easy")["train"][1]
    assert info["variation"] == first
    # the game a seed plays, asked as the runner asks after a reset, leaves the live game its engine
    pool = env.unwrapped._pool()
    taken = (pool.takeovers, pool.restores)
    n = len(env.engine().folds(TASKS[1], "easy")["train"])
    assert env.game_of(31) == env.game_of(31 + 30 * n) == f"{TASKS[1]} variation {first}"
    env.step(0)
    assert (pool.takeovers, pool.restores) == taken
    env.close()


def test_the_expert_plays_boil_to_a_win_and_the_next_game_starts_fresh():
    env = make(task="boil")
    env.reset(seed=0)
    rewards = []
    while not env.done:
        move = env.expert_move()
        assert move is not None and move in env.candidates
        rewards.append(env.step_move(move)[1])
    assert env.won and env.score == 1.0 and sum(rewards) == pytest.approx(1.0)
    assert env.steps == 36
    # ScienceWorld's load keeps the finished game's score until a step: the env starts the next game at 0
    _, info = env.reset(seed=1)
    assert info["score"] == 0.0 and not env.done and not info["won"]
    env.close()


def test_rule_is_the_expert_and_goes_on_where_the_expert_has_no_move():
    env = make(task="find-non-living-thing")
    record = play_episode(env, Rule(), 0)  # Rule plays the gold path mapped to candidates
    assert record["won"] and record["score"] == 1.0
    assert env.gold_path() == ("open door to kitchen", "go to kitchen", "look around", "focus on cupboard",
                               "move cupboard to red box")
    # the doors start open under easy: the gold path's "open door" is a tick of waiting
    assert [t["move"] for t in record["ticks"]] == ["wait1", "go to kitchen", "look around", "focus on cupboard",
                                                    "move cupboard to red box"]
    assert [t["expert_top"] for t in record["ticks"]] == [1.0] * 5  # the expert agrees with every move
    env.reset(seed=1)
    env.step_move("wait1")  # off the gold path: the expert replans (tests/test_scienceworld_expert.py), Rule too
    assert env.rule_action() == env.expert_action() == "wait1"  # the gold's "open door to hallway", a wait
    while not env.done:
        env.step_move(env.rule_action())
    assert env.won and env.steps == 8
    env.close()


def test_the_expert_reads_an_objects_names_without_moving_the_game_and_wins_chemistry_mix():
    env = make(task="chemistry-mix")
    env.reset(seed=0)
    seed_of = env.engine().jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld.globalSeed
    gold = env.gold_path()
    assert "read recipe in inventory" in gold  # the valid list calls it "read instructions to make salt water"
    while not env.done:
        before = int(seed_of())
        move = env.expert_action()
        assert int(seed_of()) == before and move in env.candidates
        env.step_move(move)
    assert env.won and (env.steps, len(gold)) == (24, 25)  # the game ends before its last gold move
    env.close()


def test_a_fork_matches_a_replay_of_the_same_moves():
    rng = np.random.default_rng(7)
    env = make(task="find-living-thing")
    env.reset(seed=2)
    moves = []
    for _ in range(4):
        moves.append(env.candidates[int(rng.integers(len(env.candidates)))])
        env.step_move(moves[-1])
        if env.done:
            break
    fork = env.fork()
    walk = ("look around", "wait1", "look around")
    a = [fork.step_move(m)[:2] for m in walk]
    replay = make(task="find-living-thing")
    replay.reset(seed=2)
    for m in moves:
        replay.step_move(m)
    b = [replay.step_move(m)[:2] for m in walk]
    assert a == b
    c = [env.step_move(m)[:2] for m in walk]  # the original, stepped after its fork, goes the same way
    assert c == a
    for e in (env, fork, replay):
        e.close()


def test_a_planners_fork_does_not_play_focus_and_never_reads_it_from_the_transition_cache():
    env = make(task="find-non-living-thing")
    env.reset(seed=0)
    for move in ("wait1", "go to kitchen", "look around"):
        env.step_move(move)
    score = env.score
    assert env.is_answer_move("focus on cupboard") and not env.is_answer_move("look at cupboard")
    oracle = env.situation().fork()
    oracle.reveal_answers()  # plays focus and keeps the children in the pool's transition cache
    played = {m: r for m, (child, r) in zip(("focus on cupboard", "look at cupboard"),
                                            oracle.fork_steps(["focus on cupboard", "look at cupboard"], keep=True))}
    assert played["focus on cupboard"][1] > 0 and not played["focus on cupboard"][4]["game_over"]
    planning = env.situation().fork()
    (focus, focused), (look, looked) = planning.fork_steps(["focus on cupboard", "look at cupboard"], keep=True)
    assert focus.outcome_hidden and (focused[1], focused[2], focused[4]["won"], focused[4]["lost"]) == (0.0, True,
                                                                                                       False, False)
    assert focused[0].startswith("You chose: focus on cupboard.") and focus.candidates == ()
    alone, alone_result = planning.fork_step("focus on cupboard", keep=True)  # one child: the same, uncached
    assert alone.outcome_hidden and alone_result[:2] == focused[:2]
    assert looked[:2] == played["look at cupboard"][:2] and not look.outcome_hidden  # other moves as played
    assert env.fork().step_move("focus on cupboard")[1] == played["focus on cupboard"][1]  # an exact fork plays it
    assert env.steps == 3 and env.score == score == 0.25  # the real game is untouched
    for e in (env, oracle, planning, focus, look, alone):
        e.close()
