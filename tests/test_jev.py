"""Jev through the official typesafe-sdk over real HTTP on loopback.

End to end against ``s1 serve`` (in-process thread), and failure cases against a
tiny scripted server that answers 401/429/500/slow/bad payloads.
"""

from __future__ import annotations

import io
import json
import logging
import time
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest
import zstandard
from loopback import ScriptedServer
from s1gym.policies import (
    Jev,
    PolicyAuthError,
    PolicyConfigError,
    PolicyRateLimitError,
    PolicyResponseError,
    PolicyServerError,
    PolicyTimeoutError,
    make_policy,
)
from typesafe_sdk import RetryPolicy

from s1gym.core import BasePolicy, Candidate, Decision, Situation
from s1gym.ui.serve import make_server

KEY = "ts-secret-key-123456"
FAST = RetryPolicy(max_retries=2, backoff_initial=0.01, backoff_max=0.02, timeout=10)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("TYPESAFE_API_KEY", "TYPESAFE_BASE_URL", "TYPESAFE_DEFAULT_MODEL"):
        monkeypatch.delenv(name, raising=False)


def situation(texts, **kw):
    cands = tuple(Candidate(t) if isinstance(t, str) else t for t in texts)
    return Situation(task="CookingWorld", observation="You are in the kitchen.\n\nMoves: " + ", ".join(c.text for c in cands),
                     state_text="You are in the kitchen.", candidates=cands, **kw)


class Peaked(BasePolicy):
    """Puts 0.9 on the last candidate; records what it was asked (checks the mapping back)."""

    name = "peaked"

    def __init__(self):
        self.seen: list[Situation] = []

    def decide(self, s):
        self.seen.append(s)
        n = len(s.candidates)
        p = np.full(n, 0.1 / max(n - 1, 1)) if n > 1 else np.ones(1)
        p[-1] = 0.9 if n > 1 else 1.0
        return Decision.from_probabilities(p)


# --------------------------------------------------------------- e2e


def test_end_to_end_against_s1_serve_with_duplicates_many_candidates_and_unicode():
    policy = Peaked()
    texts = [f"take item {i}" for i in range(63)] + ["go north", "go north", "öffne Kühlschrank ☃", "看 书"]
    cands = [Candidate(t) for t in texts[:-1]] + [
        Candidate(texts[-1], outcome="You read.\n\nRoom.", new_actions=("eat",), revisits=2)]
    with make_server(policy) as server:
        jev = Jev(api_key=KEY, base_url=server.url, retry=FAST)
        s = situation(cands, history=(("look", "A kitchen."),), notes=("cook first",))
        d = jev.decide(s)
        assert d.probabilities.size == len(texts) and abs(d.probabilities.sum() - 1) < 1e-9
        assert d.action == len(texts) - 1 and d.probabilities[-1] == pytest.approx(0.9)
        assert d.usage.calls == 1 and d.usage.input_tokens > 0
        assert d.usage.cost_usd == pytest.approx(d.usage.input_tokens * 0.042e-6)
        assert d.info["model"] == "s1gym-peaked"
        seen = policy.seen[-1]
        # labels on the wire: unique, non-ASCII intact, duplicates suffixed and mapped back by position
        assert seen.texts[:63] == tuple(texts[:63])
        assert seen.texts[63:] == ("go north", "go north (2)", "öffne Kühlschrank ☃", "看 书")
        assert "Outcome: You read." in seen.candidates[-1].outcome and "New moves: eat" in seen.candidates[-1].outcome
        assert "already in (2 times)" in seen.candidates[-1].outcome
        assert seen.task == "CookingWorld" and seen.notes == ("cook first",)
        assert seen.history == (("look", "A kitchen."),) and "Moves:" not in seen.observation
        assert server.zstd_requests >= 1  # the SDK compressed the (large) body and the server read it
        many = jev.decide_many([s] * 6)
        assert [m.action for m in many] == [d.action] * 6
        jev.close()


def test_default_model_and_env_configuration(monkeypatch):
    with make_server("uniform") as server:
        monkeypatch.setenv("TYPESAFE_BASE_URL", server.url)
        monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
        monkeypatch.setenv("TYPESAFE_DEFAULT_MODEL", "jev-custom")
        jev = make_policy("jev")
        assert jev.model == "jev-custom" and jev.base_url == server.url
        assert jev.decide(situation(["a", "b"])).probabilities.tolist() == [0.5, 0.5]


def test_no_key_fails_at_construction_naming_the_variable():
    with pytest.raises(PolicyConfigError, match="TYPESAFE_API_KEY"):
        Jev()
    with pytest.raises(PolicyConfigError, match="TYPESAFE_API_KEY"):
        Jev(base_url="https://api.typesafe.ai")
    # a loopback server (s1 serve) accepts any key, so none is needed
    with make_server("uniform") as server:
        assert Jev(base_url=server.url).decide(situation(["a", "b"])).action == 0


# ------------------------------------------------------- scripted server


class Scripted(ScriptedServer):
    """Answers POSTs from a script of (status, headers, body, delay); the last entry repeats."""

    def __init__(self, script):
        super().__init__(_ScriptedHandler, script)
        self.in_flight = self.max_in_flight = 0


class _ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "zstd":
            raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
        with self.server.lock:
            self.server.requests.append({"headers": dict(self.headers), "body": json.loads(raw)})
            entry = self.server.script[min(len(self.server.requests), len(self.server.script)) - 1]
        status, headers, body, delay = (*entry, 0)[:4] if len(entry) == 3 else entry
        if callable(body):
            body = body(self.server.requests[-1]["body"])
        with self.server.lock:
            self.server.in_flight += 1
            self.server.max_in_flight = max(self.server.max_in_flight, self.server.in_flight)
        time.sleep(delay)
        with self.server.lock:
            self.server.in_flight -= 1
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def answer(probabilities: dict | None = None, transform=None):
    """A 200 body builder: probabilities per label (default flat), optionally transformed."""

    def build(request):
        labels = list(request["questions"]["move"]["criteria"])
        probs = probabilities or {label: 1 / len(labels) for label in labels}
        if transform:
            probs = transform(dict(probs), labels)
        best = max(probs, key=lambda k: probs[k] if isinstance(probs[k], float) else 0)
        return {"model": "jev-test", "usage": {"input_tokens": 100, "output_tokens": 1},
                "answers": {"move": {"type": "choice", "choice": best, "confidence": 0.5, "probabilities": probs}}}

    return build


def jev(url, **kw):
    return Jev(api_key=KEY, base_url=url, retry=kw.pop("retry", FAST), **kw)


def test_401_is_not_retried_and_is_typed():
    with Scripted([(401, {}, {"detail": "Invalid API key"})]) as server:
        with pytest.raises(PolicyAuthError, match="401 Invalid API key") as info:
            jev(server.url).decide(situation(["a", "b"]))
        assert len(server.requests) == 1
        assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in str(info.value) and KEY not in repr(info.value)


def test_429_honours_retry_after_then_succeeds_or_gives_a_typed_error():
    limited = (429, {"retry-after-ms": "150"}, {"detail": "slow down"})
    with Scripted([limited, limited, (200, {}, answer())]) as server:
        started = time.perf_counter()
        d = jev(server.url).decide(situation(["a", "b"]))
        assert time.perf_counter() - started >= 0.28  # two waits of 150 ms, not the 10 ms backoff
        assert len(server.requests) == 3 and d.probabilities.tolist() == [0.5, 0.5]
        assert server.requests[1]["headers"].get("X-TypeSafe-Retry-Count") == "1"
    with Scripted([limited]) as server:
        with pytest.raises(PolicyRateLimitError, match="429") as info:
            jev(server.url).decide(situation(["a", "b"]))
        assert info.value.retry_after_s == pytest.approx(0.15) and len(server.requests) == 3


def test_5xx_is_retried_then_typed():
    with Scripted([(503, {}, {"detail": "overloaded"}), (200, {}, answer())]) as server:
        assert jev(server.url).decide(situation(["a", "b"])).action == 0
        assert len(server.requests) == 2
    with Scripted([(500, {}, {"detail": "boom"})]) as server:
        with pytest.raises(PolicyServerError, match="500 boom"):
            jev(server.url).decide(situation(["a", "b"]))
        assert len(server.requests) == 3


def test_timeouts_are_retried_then_typed():
    with Scripted([(200, {}, answer(), 1.0)]) as server:
        with pytest.raises(PolicyTimeoutError, match="timed out"):
            jev(server.url, timeout=0.2, retry=RetryPolicy(max_retries=1, backoff_initial=0.01)).decide(situation(["a", "b"]))
        assert len(server.requests) == 2


@pytest.mark.parametrize(
    "transform, match",
    [
        (lambda p, labels: {**{k: v for k, v in p.items() if k != labels[0]}, "other": 0.5}, "labels are not the candidates"),
        (lambda p, labels: {**p, labels[0]: -0.2, labels[1]: 1.2}, ">= 0"),
        (lambda p, labels: {k: v / 2 for k, v in p.items()}, "sum to 0.5"),
    ],
)
def test_bad_answers_are_clear_errors(transform, match):
    with Scripted([(200, {}, answer(transform=transform))]) as server:
        with pytest.raises(PolicyResponseError, match=match):
            jev(server.url).decide(situation(["a", "b", "c"]))


def test_nan_probabilities_are_rejected():
    body = (b'{"model":"m","usage":{"input_tokens":1,"output_tokens":1},"answers":{"move":{"type":"choice",'
            b'"choice":"a","confidence":0.5,"probabilities":{"a":NaN,"b":0.5}}}}')
    with Scripted([(200, {}, body)]) as server:
        with pytest.raises(PolicyResponseError):
            jev(server.url).decide(situation(["a", "b"]))


def test_rounding_is_renormalised():
    with Scripted([(200, {}, answer({"a": 0.334, "b": 0.333, "c": 0.334}))]) as server:
        d = jev(server.url).decide(situation(["a", "b", "c"]))
        assert d.info["renormalised"] and abs(d.probabilities.sum() - 1) < 1e-12


def test_decide_many_is_concurrent_and_ordered():
    def echo_first(request):
        labels = list(request["questions"]["move"]["criteria"])
        probs = {label: (0.9 if i == 0 else 0.1 / (len(labels) - 1)) for i, label in enumerate(labels)}
        return answer(probs)(request)

    with Scripted([(200, {}, echo_first, 0.2)]) as server:
        situations = [situation([f"x{k}", "y", "z"]) for k in range(8)]
        decisions = jev(server.url, max_concurrency=4).decide_many(situations)
        assert [d.action for d in decisions] == [0] * 8 and len(server.requests) == 8
        assert 2 <= server.max_in_flight <= 4  # overlapped, and bounded by max_concurrency
        firsts = sorted(list(r["body"]["questions"]["move"]["criteria"])[0] for r in server.requests)
        assert firsts == sorted(f"x{k}" for k in range(8))


def test_key_never_in_repr_logs_or_errors(caplog):
    caplog.set_level(logging.DEBUG, logger="typesafe_sdk")
    with Scripted([(500, {}, {"detail": "boom"})]) as server:
        policy = jev(server.url, retry=RetryPolicy(max_retries=1, backoff_initial=0.01))
        with pytest.raises(PolicyServerError) as info:
            policy.decide(situation(["a", "b"]))
    text = "\n".join([repr(policy), str(vars(policy)), str(info.value), repr(info.value), caplog.text])
    assert KEY not in text
    with pytest.raises(PolicyConfigError) as bad:
        Jev(api_key="bad key with spaces", base_url="https://api.typesafe.ai")
    assert "bad key with spaces" not in str(bad.value)
