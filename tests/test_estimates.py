"""A task's learned progress estimate is found through the task (S1Env.progress_estimate), not through a
decision model: any task can ship one, and Search(heuristic="progress") asks the env it searches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from toy_tasks import PRIORITY_GRAPH, PRIORITY_SCORES, PRIORITY_TABLE, GraphTask, TablePolicy

import s1gym
from s1gym.core import Situation
from s1gym.core.estimates import ProgressTokensError, TokenProgress, load_progress
from s1gym.tasks.alfworld.goals import context_tokens
from s1gym.wrappers import Search


class Estimated(GraphTask):
    """The priority toy world with an estimate that records what it was asked about."""

    calls: list[str] = []

    @classmethod
    def progress_estimate(cls):
        def moves_left(situation: Situation) -> float:
            cls.calls.append(situation.observation)
            return 1.0 - situation.score

        return moves_left


def toy(cls: type[GraphTask]) -> GraphTask:
    env = cls(PRIORITY_GRAPH, scores=PRIORITY_SCORES, wins=("win",))
    env.reset(seed=0)
    return env


def test_search_asks_the_task_for_its_estimate():
    Estimated.calls = []
    env = toy(Estimated)
    search = Search(TablePolicy(PRIORITY_TABLE), heuristic="progress", budget=10)
    decision = search.decide(env.situation())
    assert len(Estimated.calls) >= 4  # the root and its three children were scored by the task's estimate
    assert decision.info["solved"]


def test_a_task_without_an_estimate_is_a_clear_error():
    env = toy(GraphTask)
    assert GraphTask.progress_estimate() is None
    with pytest.raises(ValueError, match="Toy ships no learned progress estimate"):
        Search(TablePolicy(PRIORITY_TABLE), heuristic="progress").decide(env.situation())


def test_a_task_names_its_packaged_estimate():
    from s1gym.tasks.alfworld.env import ALFWorldEnv

    estimate = ALFWorldEnv.progress_estimate()
    assert isinstance(estimate, TokenProgress) and estimate is load_progress("local_alfworld.json", context_tokens)
    start = Situation(task="ALFWorld", observation="Your task is to: put a clean soapbar in cabinet.",
                      candidates=(), state_text="Your task is to: put a clean soapbar in cabinet.\nYou are carrying nothing.")
    holding = Situation(task="ALFWorld", observation="", candidates=(),
                        state_text="Your task is to: put a clean soapbar in cabinet.\nYou are carrying the soapbar 1.")
    assert "hold:-" in context_tokens(start) and "hold:g" in context_tokens(holding)
    assert 0.0 <= estimate(holding) < estimate(start)


def test_token_progress_is_linear_in_the_tokens_and_never_negative(tmp_path):
    s = Situation(task="t", observation="", candidates=(), state_text="Goal: find the key.\nYou are carrying nothing.")
    weights = {"*": 5.0, "g:key": 2.0, "hold:-": -10.0}
    assert TokenProgress(weights, context_tokens)(s) == 0.0  # 5 + 2 - 10, floored at 0
    assert TokenProgress({"*": 5.0, "g:key": 2.0}, context_tokens)(s) == 7.0
    assert TokenProgress({}, context_tokens)(s) == 0.0
    data = json.loads(json.dumps({"progress": weights}))
    assert TokenProgress(data["progress"], context_tokens) == TokenProgress(weights, context_tokens)


def test_the_core_imports_no_task_family():
    """``s1gym.core`` and what it imports load no module of a task family (the contract knows no task). The
    package root is stood in by a bare package, because ``import s1gym`` itself registers every family's ids
    (s1gym.registration imports each family's ``TASKS``)."""
    code = (
        "import sys, types; "
        "root = types.ModuleType('s1gym'); root.__path__ = [sys.argv[1]]; sys.modules['s1gym'] = root; "
        "import s1gym.core; "
        "families = ('s1gym.tasks', 's1gym.reading', 's1gym.registration'); "
        "print(sorted(m for m in sys.modules if m.startswith(families)), "
        "'s1gym.core.env' in sys.modules)")
    package = str(Path(s1gym.__file__).parent)
    out = subprocess.run([sys.executable, "-c", code, package], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] True"


def test_importing_the_core_through_the_package_loads_only_the_families_id_tables():
    """``python -c "import s1gym.core"`` runs ``s1gym/__init__`` first, which registers every id: that reads each
    family's ``TASKS`` (and the two tables they are built from, the TWX games' rows and the web catalogue),
    and nothing else of a family: no env, engine, expert or reader module loads until an env is made."""
    code = ("import sys, s1gym.core; "
            "print(sorted(m for m in sys.modules if m.startswith(('s1gym.tasks', 's1gym.reading'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str([
        "s1gym.tasks", "s1gym.tasks.alfworld", "s1gym.tasks.desktop", "s1gym.tasks.games", "s1gym.tasks.robot",
        "s1gym.tasks.text", "s1gym.tasks.twx", "s1gym.tasks.twx.games", "s1gym.tasks.web",
        "s1gym.tasks.web.catalogue",
    ]), "import s1gym loads more of a family than its id table; import the rest where an env needs it"


def test_a_task_naming_an_estimate_without_its_token_reader_is_a_clear_error():
    class NoReader(GraphTask):
        progress_model = "local_alfworld.json"

    with pytest.raises(ProgressTokensError, match="NoReader names progress_model 'local_alfworld.json'"):
        NoReader.progress_estimate()


def test_local_finds_its_shipped_model_through_the_task_class():
    from s1gym.policies.local import task_model
    from s1gym.tasks.alfworld.env import ALFWorldEnv
    from s1gym.tasks.twx.env import CookingWorldEnv

    assert ALFWorldEnv.local_model == "local_alfworld.json"
    assert task_model("ALFWorld").provenance == task_model("s1/ALFWorld-v0").provenance
    assert task_model("CookingWorld").provenance["task"] == CookingWorldEnv.task_name
    assert task_model("Blackjack").provenance["protocol"] == "bench/others_protocol.md"
    assert task_model("Millionaire") is None and task_model("NoSuchTask") is None  # no fitted model, no task
