"""s1/Millionaire-v0: ladder arithmetic, lifelines, seeding, fork, data loading and the OpenTDB fetcher."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import s1gym  # noqa: F401  (registers the tasks)
from s1gym.datasets import DataError
from s1gym.tasks.games.trivia import fetch_opentdb, load_trivia
from s1gym.tasks.games.millionaire import FIFTY_FIFTY, LADDER, WALK_AWAY, MillionaireEnv, guaranteed, prize

SHARED = Path(os.environ.get("S1GYM_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
TRIVIA = SHARED / "trivia" / "opentdb_multiple.jsonl"


def make(**options) -> MillionaireEnv:
    return gym.make("s1/Millionaire-v0", **options)


def right(env: MillionaireEnv):
    return env.step(env.index_of(env.expert_action()))


def wrong(env: MillionaireEnv):
    move = next(c for c in env.candidates if c not in (env.expert_action(), FIFTY_FIFTY, WALK_AWAY))
    return env.step(env.index_of(move))


def climb(env: MillionaireEnv, levels: int) -> None:
    for _ in range(levels):
        right(env)


def bank_rows(per_tier: int = 5, mark: str = "") -> list[dict]:
    return [
        {
            "type": "multiple",
            "difficulty": d,
            "category": "Science &amp; Nature",
            "question": f"{mark}{d} question {i}: which is &quot;right&quot;?",
            "correct_answer": f"right {d} {i}",
            "incorrect_answers": [f"wrong {d} {i} a", f"wrong {d} {i} b", f"wrong {d} {i} c"],
        }
        for d in ("easy", "medium", "hard")
        for i in range(per_tier)
    ]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ------------------------------------------------------------------ ladder
def test_ladder_table_and_safe_havens():
    assert len(LADDER) == 15 and LADDER[0] == 100 and LADDER[-1] == 1_000_000
    assert list(LADDER) == sorted(LADDER)
    assert [guaranteed(k) for k in (0, 4, 5, 9, 10, 14)] == [0, 0, 1_000, 1_000, 32_000, 32_000]
    assert prize(5) == 1_000 and prize(10) == 32_000


@pytest.mark.parametrize("level, kept", [(0, 0), (3, 0), (5, 1_000), (7, 1_000), (10, 32_000), (14, 32_000)])
def test_wrong_answer_drops_to_the_last_safe_haven_and_ends(level, kept):
    env = make()
    env.reset(seed=1)
    climb(env, level)
    assert env.unwrapped._winnings == prize(level)
    _, reward, terminated, truncated, info = wrong(env)
    assert (info["winnings"], info["outcome"]) == (kept, "wrong answer")
    assert terminated and not truncated and info["lost"] and not info["won"] and info["game_over"]
    assert info["score"] == kept / 1_000_000
    assert reward == pytest.approx((kept - prize(level)) / 1_000_000)
    assert env.candidates == () and info["action_mask"].tolist() == [1] * 6  # game over: any index a no-op


def test_walk_away_keeps_winnings():
    env = make()
    env.reset(seed=2)
    climb(env, 7)
    _, reward, terminated, _, info = env.step(env.index_of(WALK_AWAY))
    assert (info["winnings"], info["outcome"], terminated, reward) == (4_000, "walked away", True, 0.0)
    assert info["score"] == 0.004
    assert info["game_over"] and not info["won"] and not info["lost"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_oracle_wins_the_million_in_fifteen_answers(seed):
    env = make()
    env.reset(seed=seed)
    total = 0.0
    for _ in range(15):
        total += right(env)[1]
    assert env.won and env.score == 1.0 and total == pytest.approx(1.0) and env.steps == 15
    assert env.unwrapped._extra_info()["outcome"] == "millionaire"


def test_fifty_fifty_leaves_the_right_answer_and_one_wrong_one():
    env = make()
    obs, info = env.reset(seed=4)
    question = obs.split("\n\n")[-2]
    right_answer = env.expert_action()
    slots = info["candidates"]
    assert env.index_of(FIFTY_FIFTY) == 4 and slots[4:] == [FIFTY_FIFTY, WALK_AWAY]
    _, reward, terminated, _, info = env.step(env.index_of(FIFTY_FIFTY))
    answers = [c for c in env.candidates if c != WALK_AWAY]
    assert reward == 0.0 and not terminated and info["fifty_fifty_used"]
    assert len(answers) == 2 and right_answer in answers
    assert info["candidates"] == slots  # the slots keep their meaning and wording; the mask drops the rest
    assert info["action_mask"].tolist() == [int(a in answers) for a in slots[:4]] + [0, 1]
    assert [env.index_of(a) for a in answers] == [slots.index(a) for a in answers]
    assert question in env.render()  # the question stays
    right(env)
    assert FIFTY_FIFTY not in env.candidates and len(env.candidates) == 5  # four answers + walk away


def test_questions_go_easy_medium_hard():
    env = make()
    env.reset(seed=7)
    seen = []
    for k in range(1, 16):
        obs = env.render()
        assert f"Question {k} of 15 for ${prize(k):,}" in obs
        seen.append(next(d for d in ("easy", "medium", "hard") if f"({d}," in obs))
        right(env)
    assert seen == ["easy"] * 5 + ["medium"] * 5 + ["hard"] * 5


def ladder_questions(seed: int, **options) -> tuple[str, ...]:
    env = make(**options)
    env.reset(seed=seed)
    out = []
    while not env.done:
        out.append(env.render().split("\n\n")[-2])
        right(env)
    return tuple(out)


def test_seeds_draw_different_ladders_and_ladders_caps_them():
    ladders = {ladder_questions(s) for s in range(8)}
    assert len(ladders) == 8
    assert ladder_questions(1, ladders=3) == ladder_questions(4, ladders=3) != ladder_questions(2, ladders=3)


def test_answer_order_and_everything_shown_ignore_which_answer_is_right(tmp_path):
    """Privileged knowledge stays out: swapping the right answer changes nothing a player sees."""
    rows = bank_rows()
    swapped = [
        {
            **r,
            "correct_answer": r["incorrect_answers"][0],
            "incorrect_answers": [r["correct_answer"], *r["incorrect_answers"][1:]],
        }
        for r in rows
    ]
    a = MillionaireEnv(questions=write_jsonl(tmp_path / "a.jsonl", rows))
    b = MillionaireEnv(questions=write_jsonl(tmp_path / "b.jsonl", swapped))
    for seed in range(5):
        oa, ia = a.reset(seed=seed)
        ob, ib = b.reset(seed=seed)
        assert oa == ob and a.state_key() == b.state_key() and a.rule_action() == b.rule_action()
        assert {k: v for k, v in ia.items() if k != "action_mask"} == {
            k: v for k, v in ib.items() if k != "action_mask"
        }
        assert a.expert_action() != b.expert_action()


def test_rule_follows_its_documented_strategy():
    env = make()
    env.reset(seed=5)
    assert env.rule_action() == env.candidates[0]
    climb(env, 10)
    assert env.rule_action() == FIFTY_FIFTY  # first hard question
    env.step(env.index_of(FIFTY_FIFTY))
    assert env.rule_action() == env.candidates[0]
    right(env)
    assert env.rule_action() == WALK_AWAY  # past the second safe haven


# -------------------------------------------------------------------- fork
@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    level=st.integers(0, 13),
    lifeline_first=st.booleans(),
    moves=st.lists(st.integers(0, 5), min_size=1, max_size=6),
)
def test_fork_mid_ladder_keeps_lifeline_and_rng(seed, level, lifeline_first, moves):
    env = make()
    env.reset(seed=seed)
    if lifeline_first:
        env.step(env.index_of(FIFTY_FIFTY))
    climb(env, level)
    fork = env.fork()
    assert fork.unwrapped._fifty_used == env.unwrapped._fifty_used
    assert fork.unwrapped._rng.bit_generator.state == env.unwrapped._rng.bit_generator.state
    assert fork.unwrapped._rng is not env.unwrapped._rng
    assert fork.render() == env.render() and fork.state_key() == env.state_key()

    def play(e):
        trace = []
        if FIFTY_FIFTY in e.candidates:  # both draw the surviving wrong answer from their own RNG copy
            trace.append(tuple(e.step(e.index_of(FIFTY_FIFTY))[4]["candidates"]))
        for m in moves:
            if e.done:
                break
            obs, reward, term, _trunc, info = e.step(m % len(e.candidates))
            trace.append((obs, reward, term, info["winnings"]))
        return trace

    assert play(fork) == play(env)


# -------------------------------------------------------------------- data
def test_html_entities_are_unescaped_for_display(tmp_path):
    rows = bank_rows()
    rows[0].update(
        question="Who wrote &quot;Caf&eacute; &amp; Co&quot;? It&#039;s &lt;hard&gt;",
        correct_answer="Ren&eacute;e",
    )
    bank = load_trivia(write_jsonl(tmp_path / "q.jsonl", rows))
    assert bank[0].question == 'Who wrote "Café & Co"? It\'s <hard>'
    assert bank[0].correct_answer == "Renée" and bank[0].category == "Science & Nature"
    env = MillionaireEnv(questions=tmp_path / "q.jsonl")
    for seed in range(200):
        obs, info = env.reset(seed=seed)
        assert "&quot;" not in obs and "&amp;" not in obs and env.observation_space.contains(obs)
        if "Café" in obs:
            assert "Renée" in info["candidates"]
            break
    else:
        pytest.fail("the first easy question never opened a ladder in 200 seeds")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda rows: [r.pop("correct_answer") for r in rows], "no column 'correct_answer'"),
        (lambda rows: rows[3].pop("correct_answer"), "row 4 has no value in column 'correct_answer'"),
        (lambda rows: rows[2].update(difficulty="extreme"), "unknown difficulty 'extreme'"),
        (lambda rows: rows[1].update(incorrect_answers=["x", "y"]), "exactly 3 strings"),
        (lambda rows: rows[1].update(type="boolean"), "type 'boolean'"),
        (lambda rows: rows[0].update(incorrect_answers=["a", "a", "b"]), "distinct"),
        (lambda rows: rows[0].update(correct_answer="walk away"), "lifeline"),
        (lambda rows: [rows.pop() for _ in range(3)], "too few questions"),
    ],
)
def test_bad_question_banks_fail_clearly(tmp_path, edit, message):
    rows = bank_rows()
    edit(rows)
    with pytest.raises(DataError, match=message):
        MillionaireEnv(questions=write_jsonl(tmp_path / "bad.jsonl", rows))


def test_missing_or_empty_bank_fails_clearly(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        make(questions=str(tmp_path / "nope.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataError, match="empty"):
        make(questions=str(tmp_path / "empty.jsonl"))
    (tmp_path / "q.csv").write_text("question\n")
    with pytest.raises(DataError, match="JSONL"):
        make(questions=str(tmp_path / "q.csv"))


@pytest.mark.shared
@pytest.mark.skipif(
    not TRIVIA.is_file(), reason=f"shared trivia bank not found at {TRIVIA} (set S1GYM_SHARED_DATA)"
)
def test_the_shared_opentdb_bank_loads_and_plays():
    bank = load_trivia(TRIVIA)
    assert len(bank) == 3170
    assert {d: sum(q.difficulty == d for q in bank) for d in ("easy", "medium", "hard")} == {
        "easy": 998,
        "medium": 1449,
        "hard": 723,
    }
    assert not any("&quot;" in s or "&#039;" in s or "&amp;" in s for q in bank for s in q.texts())
    env = make(questions=str(TRIVIA))
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        assert env.observation_space.contains(obs)
        while not env.done:
            obs = right(env)[0]
            assert env.observation_space.contains(obs)
        assert env.won


# ----------------------------------------------------------- OpenTDB fetch
class FakeOpenTDB(BaseHTTPRequestHandler):
    """The two endpoints of opentdb.com the fetcher uses, over a fixed pool; one rate-limit answer first."""

    pool: ClassVar[list[dict]] = []
    served: ClassVar[dict[str, int]] = {}
    requests: ClassVar[list[dict]] = []
    rate_limit_once = True

    def do_GET(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        type(self).requests.append({"path": url.path, **query})
        if url.path == "/api_token.php":
            token = f"t{len(self.served)}"
            self.served[token] = 0
            body = {"response_code": 0, "token": token}
        elif type(self).rate_limit_once:
            type(self).rate_limit_once = False
            body = {"response_code": 5, "results": []}
        else:
            start = self.served[query["token"]]
            if start >= len(self.pool):
                body = {"response_code": 4, "results": []}
            else:
                batch = self.pool[start : start + int(query["amount"])]
                self.served[query["token"]] = start + len(batch)
                body = {"response_code": 0, "results": batch}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        return None


@pytest.fixture
def opentdb():
    FakeOpenTDB.pool = bank_rows(per_tier=6, mark="&lt;api&gt; ")
    FakeOpenTDB.served, FakeOpenTDB.requests, FakeOpenTDB.rate_limit_once = {}, [], True
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenTDB)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_opentdb_fetcher_against_a_loopback_server(opentdb, tmp_path, monkeypatch):
    monkeypatch.setenv("S1GYM_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="trivia fetch"):
        make(questions="opentdb")
    path = fetch_opentdb(10, base_url=opentdb, batch_size=4, min_interval_s=0)
    assert path == tmp_path / "cache" / "opentdb_multiple.jsonl"
    assert len(load_trivia(path)) == 10
    api = [r for r in FakeOpenTDB.requests if r["path"] == "/api.php"]
    assert all(r["type"] == "multiple" and r["token"] == "t0" for r in api)
    assert [r["amount"] for r in api] == ["4", "4", "4", "2"]  # the first 4 were rate-limited and retried
    # a second run with a new token skips the cached questions and stops when the token is exhausted
    fetch_opentdb(50, base_url=opentdb, min_interval_s=0)
    bank = load_trivia(path)
    assert len(bank) == 18 and len({q.question for q in bank}) == 18
    assert bank[0].question.startswith("<api> ")
    env = make(questions="opentdb")
    env.reset(seed=0)
    climb(env, 15)
    assert env.won


def test_opentdb_fetcher_reports_an_unreachable_server(tmp_path):
    with pytest.raises(DataError, match="Open Trivia DB"):
        fetch_opentdb(
            5, cache=tmp_path / "c.jsonl", base_url="http://127.0.0.1:9", min_interval_s=0, timeout_s=2
        )


def test_summary_reports_mean_winnings():
    summary = MillionaireEnv.summarize_episodes(
        [{"winnings": 1_000, "outcome": "wrong answer"}, {"winnings": 3_000, "outcome": "walked away"}]
    )
    assert summary["mean_winnings"] == 2_000 and summary["outcomes"] == {"wrong answer": 1, "walked away": 1}
    lo, hi = summary["mean_winnings_ci95"]
    assert 1_000 <= lo <= 2_000 <= hi <= 3_000
    assert np.isfinite(summary["median_winnings"])
