"""Failures by kind (issue 57): summary.json and ``s1 table`` tell a lost game from an invalid reply, a
failed policy and a dead engine."""

from __future__ import annotations

import json
import re

from s1gym.policies.common import flat_decision
from s1gym.policies.errors import PolicyError

from s1gym.core import BasePolicy, Situation
from s1gym.errors import EngineCrashed
from s1gym.jobs.summary import failures
from s1gym.reporting.replay.index import write_index
from s1gym.reporting.replay.page import Strings, load_trial, trial_data
from s1gym.reporting.table import COLUMNS, row_cells, table_rows
from s1gym.runner.spec import evaluate


class Troubled(BasePolicy):
    """Plays the first candidate; its decisions on hand 1 come from an invalid reply; on hand 2 the API
    fails, on hand 3 the engine dies (a policy cannot kill one here: it raises what the env would)."""

    name = "troubled"

    def __init__(self) -> None:
        self.hand = -1

    def reset(self) -> None:
        self.hand += 1

    def decide(self, situation: Situation):
        if self.hand == 2:
            raise PolicyError("the API answered 503")
        if self.hand == 3:
            raise EngineCrashed("the engine died", engine="test engine")
        info = {"invalid_replies": ["I'd rather not"], "fallback": "flat odds"} if self.hand == 1 else {}
        return flat_decision(len(situation.candidates), info=info)


def test_failures_count_each_kind_apart():
    won = {"agent_result": {"metadata": {"won": True}}}
    lost = {"agent_result": {"metadata": {"won": False, "invalid_decisions": 2}}}
    trials = [won, lost, {"exception_info": {"kind": "policy"}}, {"exception_info": {"kind": "engine"}},
              {"exception_info": {"kind": None}}, {"exception_info": {"exception_type": "old, no kind"}}]
    assert failures(trials) == {"task": 1, "invalid_decisions": 2, "invalid_episodes": 1, "policy_errors": 1,
                                "engine_errors": 1, "other_errors": 2}


def test_summary_and_table_split_the_failures(tmp_path):
    summary = evaluate("Blackjack", Troubled(), episodes=4, seed=0, retries=0, out=tmp_path, job="j")
    f = summary["failures"]
    assert (f["policy_errors"], f["engine_errors"], f["other_errors"]) == (1, 1, 0)
    assert f["invalid_episodes"] == 1 and f["invalid_decisions"] >= 1
    assert f["task"] == 2 - summary["wins"] and summary["errors"] == 2
    assert json.loads((tmp_path / "j" / "summary.json").read_text())["failures"] == f
    (row,) = table_rows([tmp_path])
    cells = dict(zip(COLUMNS, row_cells(row), strict=True))
    assert cells["not won"] == str(f["task"])
    assert cells["invalid"] == f"{f['invalid_decisions']} in 1 ep"
    assert cells["errors"] == "2 (1 policy, 1 engine)"


def test_replay_index_and_pages_mark_each_failure_kind(tmp_path):
    evaluate("Blackjack", Troubled(), episodes=4, seed=0, retries=0, out=tmp_path, job="j")
    index, pages = write_index([tmp_path / "j"], tmp_path / "replay")
    marks = re.findall(r'<td class="outcome (\w+)">([^<]*)</td>', index.read_text())
    assert marks == [
        ("task", "task failure: lost"),
        ("task", "task failure: lost; 1 invalid decision"),
        ("policy_error", "policy error: PolicyError"),
        ("engine_error", "engine error: EngineCrashed"),
    ]
    ends = [trial_data(load_trial(t), Strings())["end"] for t in sorted((tmp_path / "j").glob("*__*"))]
    assert [(e["outcome"], e["verdict"]) for e in ends] == marks
