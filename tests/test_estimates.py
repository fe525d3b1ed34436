"""A task's learned progress estimate and Local's model are found through the task's family declaration
(s1gym.registration), not through the env or a decision model: any family can ship them, and
Search(heuristic="progress") asks the registry for the task it searches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from toy_tasks import PRIORITY_GRAPH, PRIORITY_SCORES, PRIORITY_TABLE, GraphTask, TablePolicy

import s1gym
from s1gym import registration
from s1gym.core import Situation
from s1gym.core.estimates import TokenProgress, load_progress
from s1gym.family import Family, Task
from s1gym.tasks.alfworld.goals import context_tokens
from s1gym.wrappers import Search

CALLS: list[str] = []


def moves_left(situation: Situation) -> float:
    CALLS.append(situation.observation)
    return 1.0 - situation.score


class Estimated(GraphTask):
    task_name = "ToyEstimated"


@pytest.fixture(scope="module", autouse=True)
def toy_family():
    registration.add_family(Family(name="toy-estimates", package="toy_tasks", tasks=(
        Task(id="toy/ToyEstimated-v0", entry_point="toy_tasks:GraphTask", progress=moves_left),)))
    yield
    registration.remove_family("toy-estimates")


def toy(cls: type[GraphTask]) -> GraphTask:
    env = cls(PRIORITY_GRAPH, scores=PRIORITY_SCORES, wins=("win",))
    env.reset(seed=0)
    return env


def test_search_asks_the_family_for_its_estimate():
    CALLS.clear()
    env = toy(Estimated)
    search = Search(TablePolicy(PRIORITY_TABLE), heuristic="progress", budget=10)
    decision = search.decide(env.situation())
    assert len(CALLS) >= 4  # the root and its three children were scored by the declared estimate
    assert decision.info["solved"]


def test_a_task_without_an_estimate_is_a_clear_error():
    env = toy(GraphTask)
    assert registration.progress_estimate("Toy") is None
    with pytest.raises(ValueError, match="Toy ships no learned progress estimate"):
        Search(TablePolicy(PRIORITY_TABLE), heuristic="progress").decide(env.situation())


def test_a_family_declares_its_packaged_estimate():
    estimate = registration.progress_estimate("ALFWorld")
    model = registration.model_file("ALFWorld")
    assert model == Path(s1gym.__file__).parent / "tasks" / "alfworld" / "data" / "local_alfworld.json"
    assert isinstance(estimate, TokenProgress) and estimate is load_progress(model, context_tokens)
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
    """``s1gym.core`` and what it imports load no module of a task family and not the registry (the contract
    knows no task). The package root is stood in by a bare package, because ``import s1gym`` itself
    registers every family's ids."""
    code = (
        "import sys, types; "
        "root = types.ModuleType('s1gym'); root.__path__ = [sys.argv[1]]; sys.modules['s1gym'] = root; "
        "import s1gym.core; "
        "families = ('s1gym.tasks', 's1gym.registration', 's1gym.family'); "
        "print(sorted(m for m in sys.modules if m.startswith(families)), "
        "'s1gym.core.env' in sys.modules)")
    package = str(Path(s1gym.__file__).parent)
    out = subprocess.run([sys.executable, "-c", code, package], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] True"


def test_importing_the_package_loads_only_the_families_declarations():
    """``import s1gym`` registers every id: that loads each family's declaration (``family.py``, and the
    tables declarations are built from, e.g. the TWX games' rows and the web catalogue) and nothing else of
    a family: no env, engine, expert, model or reader module loads until something needs it."""
    code = "import sys, s1gym.core; print(sorted(m for m in sys.modules if m.startswith('s1gym.tasks')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(out.stdout.strip()))  # noqa: S307 - a list of module names printed by our own child
    own = [f for f in registration.families() if f.package.startswith("s1gym.tasks.")]
    assert {f"{f.package}.family" for f in own} <= loaded
    entry_modules = {t.entry_point.partition(":")[0] for f in own for t in f.tasks}
    heavy = {m for m in loaded if m in entry_modules
             or m.rpartition(".")[2] in {"env", "engine", "expert", "model", "tokens", "views", "view"}
             or m.rpartition(".")[2].startswith("fit")}
    assert not heavy, f"import s1gym loads more of a family than its declaration: {sorted(heavy)}"


def test_local_finds_its_shipped_model_through_the_family():
    from s1gym.policies.local import task_model

    assert task_model("ALFWorld").provenance == registration.local_model("ALFWorld").provenance
    assert registration.model_file("s1/ALFWorld-v0") == registration.model_file("ALFWorld")
    assert task_model("CookingWorld").provenance["task"] == "CookingWorld"
    assert task_model("Blackjack").provenance["protocol"] == "bench/others_protocol.md"
    assert task_model("Millionaire") is None and task_model("NoSuchTask") is None  # no fitted model, no task


def test_a_model_file_of_an_undeclared_kind_is_a_clear_error(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"kind": "nosuchkind", "weights": {}}))
    with pytest.raises(ValueError, match="model kind 'nosuchkind' is not one a family declares"):
        registration.load_model(path)
