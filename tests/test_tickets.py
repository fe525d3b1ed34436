"""s1/TicketRouter-v0: episodes, batches, what is revealed when, keyword router, data errors, metrics."""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path

import gymnasium as gym
import pytest

import s1gym  # noqa: F401  (registers the tasks)
from s1gym.datasets import DataError
from s1gym.tasks.text.tickets import TicketRouterEnv, keyword_route

SHARED = Path(os.environ.get("S1GYM_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
BITEXT = SHARED / "tickets" / "bitext_customer_support.csv"
QUEUES = ["account", "billing", "delivery", "returns", "technical"]


def make(**options) -> TicketRouterEnv:
    return gym.make("s1/TicketRouter-v0", **options)


def route(env: TicketRouterEnv, queue: str):
    return env.step(env.index_of(queue))


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_default_set_has_thirty_tickets_over_five_queues():
    env = make()
    _, info = env.reset(seed=0)
    assert env.action_space.n == 5 and info["candidates"] == QUEUES
    assert len(env.unwrapped.items) == 30
    texts = set()
    for seed in range(30):  # seeds 0..n-1 see every ticket once
        env.reset(seed=seed)
        texts.add(env.unwrapped.current_text)
    assert len(texts) == 30


def test_right_queue_scores_one_and_the_truth_is_revealed_only_at_the_end():
    env = make()
    _, info = env.reset(seed=3)
    assert info["routed"] == []  # present on every step, empty until the episode is over
    truth = env.expert_action()
    _, reward, terminated, truncated, info = route(env, truth)
    assert (reward, terminated, truncated, info["won"], info["score"]) == (1.0, True, False, True, 1.0)
    assert info["routed"] == [[truth, truth]]

    env.reset(seed=3)
    wrong = next(q for q in QUEUES if q != truth)
    obs, reward, terminated, _, info = route(env, wrong)
    assert (reward, terminated, info["lost"]) == (0.0, True, True)
    assert info["routed"] == [[wrong, truth]]
    assert truth not in obs  # the observation never says what the right queue was


def test_a_batch_is_one_decision_per_ticket():
    env = make(batch=3)
    _, info = env.reset(seed=1)
    assert env.unwrapped.max_steps == 3
    total, seen = 0.0, []
    for k, correct in enumerate([True, False, True], 1):
        assert f"Ticket {k} of 3:" in env.render() and info["routed"] == []
        seen.append(env.unwrapped.current_text)
        truth = env.expert_action()
        move = truth if correct else next(q for q in QUEUES if q != truth)
        _, reward, terminated, _, info = route(env, move)
        total += reward
        assert terminated == (k == 3)
    assert info["score"] == pytest.approx(2 / 3) == pytest.approx(total)
    assert len(info["routed"]) == 3 and [p == t for p, t in info["routed"]] == [True, False, True]
    assert len(set(seen)) == 3
    with pytest.raises(ValueError, match="batch=31 exceeds"):
        make(batch=31)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        make(batch=0)


def test_jsonl_tickets_with_own_columns_and_label_mapping(tmp_path):
    path = tmp_path / "t.jsonl"
    rows = [
        {"body": f"ticket {i}", "team": f" {q} ", "secret": "never shown"}
        for i, q in enumerate(["b", "a", "c", "a"])
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = make(tickets=str(path), text_column="body", label_column="team")
    _, info = env.reset(seed=0)
    assert info["candidates"] == ["a", "b", "c"] and env.action_space.n == 3  # labels stripped and sorted
    assert all(item.label in ("a", "b", "c") for item in env.unwrapped.items)
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        assert "never shown" not in obs
    ordered = make(tickets=str(path), text_column="body", label_column="team", queues=["c", "b", "a", "z"])
    assert ordered.reset(seed=0)[1]["candidates"] == ["c", "b", "a", "z"]


def test_bad_ticket_files_fail_clearly(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        make(tickets=str(tmp_path / "missing.csv"))
    good = write_csv(tmp_path / "t.csv", ["text", "queue"], [["hello", "a"], ["bye", "b"]])
    with pytest.raises(DataError, match=r"no column 'category'; its columns are \['text', 'queue'\]"):
        make(tickets=str(good), label_column="category")
    with pytest.raises(DataError, match=r"row 2 has unknown label 'b'.*allowed: \['a'\]"):
        make(tickets=str(good), queues=["a"])
    with pytest.raises(DataError, match="empty"):
        make(tickets=str(write_csv(tmp_path / "e.csv", ["text", "queue"], [])))
    with pytest.raises(DataError, match="row 1 has an empty text"):
        make(tickets=str(write_csv(tmp_path / "x.csv", ["text", "queue"], [["  ", "a"]])))
    (tmp_path / "t.txt").write_text("text,queue\nhello,a\n")
    with pytest.raises(DataError, match="suffix '.txt'"):
        make(tickets=str(tmp_path / "t.txt"))


def test_keyword_router():
    assert keyword_route("I was charged twice for my subscription", QUEUES) == "billing"
    assert keyword_route("The app crashes on start", QUEUES) == "technical"
    assert keyword_route("my parcel is stuck in transit", QUEUES) == "delivery"
    assert keyword_route("nothing matches here", QUEUES) == "account"  # no hit: the first queue
    bitext = ["ACCOUNT", "CANCELLATION_FEE", "CONTACT", "DELIVERY", "NEWSLETTER", "ORDER", "SHIPPING_ADDRESS"]
    assert keyword_route("what is the cancellation fee?", bitext) == "CANCELLATION_FEE"
    assert keyword_route("change my shipping address", bitext) == "SHIPPING_ADDRESS"
    assert keyword_route("I want to talk to a human agent", bitext) == "CONTACT"
    assert keyword_route("unsubscribe me from the newsletter", bitext) == "NEWSLETTER"
    assert (
        keyword_route("my printer is jammed", ["other", "printer jams"]) == "printer jams"
    )  # own name's words


def test_rule_never_reads_the_label(tmp_path):
    env = make()
    items = env.unwrapped.items
    labels = [i.label for i in items]
    random.Random(0).shuffle(labels)
    relabelled = write_csv(
        tmp_path / "r.csv", ["text", "queue"], [[i.text, q] for i, q in zip(items, labels)]
    )
    other = make(tickets=str(relabelled))
    for seed in range(30):
        env.reset(seed=seed)
        other.reset(seed=seed)
        assert env.rule_action() == other.rule_action()
        assert env.render() == other.render() and env.state_key() == other.state_key()


def test_summary_accuracy_and_confusion():
    infos = [{"routed": [["a", "a"]]}, {"routed": [["b", "a"], ["b", "b"]]}, {"won": False}]
    summary = TicketRouterEnv.summarize_episodes(infos)
    assert summary["decisions"] == 3 and summary["accuracy"] == pytest.approx(2 / 3)
    assert summary["confusion"] == {"a": {"a": 1, "b": 1}, "b": {"a": 0, "b": 1}}
    lo, hi = summary["accuracy_ci95"]
    assert 0 <= lo <= 2 / 3 <= hi <= 1
    assert TicketRouterEnv.summarize_episodes(infos) == summary  # deterministic bootstrap
    assert TicketRouterEnv.summarize_episodes([]) == {"decisions": 0}


@pytest.mark.shared
@pytest.mark.skipif(
    not BITEXT.is_file(), reason=f"shared ticket set not found at {BITEXT} (set S1GYM_SHARED_DATA)"
)
def test_the_shared_bitext_set_routes_and_never_shows_the_response():
    options = {"tickets": str(BITEXT), "text_column": "instruction", "label_column": "category"}
    env = make(**options)
    assert len(env.unwrapped.items) == 3181 and env.action_space.n == 11
    with BITEXT.open(newline="", encoding="utf-8") as f:
        response = {row["instruction"].strip(): row["response"] for row in csv.DictReader(f)}
    infos = []
    for seed in range(200):
        obs, info = env.reset(seed=seed)
        assert env.observation_space.contains(obs) and len(info["candidates"]) == 11
        assert response[env.unwrapped.current_text][:60] not in obs
        infos.append(route(env, env.rule_action())[4])
    accuracy = TicketRouterEnv.summarize_episodes(infos)["accuracy"]
    assert accuracy > 0.6  # the keyword router is far above chance (1/11)
