"""Chat against a small OpenAI-compatible server on loopback that checks the request shape."""

from __future__ import annotations

import json
import math
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest
from loopback import ScriptedServer
from s1gym.policies import Chat, PolicyAuthError, PolicyConfigError, PolicyRateLimitError, PolicyServerError

from s1gym.core import Candidate, Situation

KEY = "sk-chat-secret-98765"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENROUTER_API_KEY", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)


def situation(texts=("open fridge", "eat trash can", "read cookbook"), **kw):
    return Situation(task="CookingWorld", observation="Kitchen.\n\nMoves: " + ", ".join(texts),
                     state_text="Kitchen.", candidates=tuple(Candidate(t) for t in texts), **kw)


def completion(content, top=None, usage=(50, 1)):
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if top is not None:
        choice["logprobs"] = {"content": [{"token": content, "logprob": max(top.values()),
                                           "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top.items()]}]}
    return {"id": "x", "object": "chat.completion", "model": "toy", "choices": [choice],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


class OpenAIish(ScriptedServer):
    """Replies from a script of (status, headers, body or callable(request)); the last one repeats."""

    url_suffix = "/v1"

    def __init__(self, script):
        super().__init__(_Handler, script)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path == "/v1/chat/completions"
        with self.server.lock:
            self.server.requests.append({"headers": dict(self.headers), "body": body})
            status, headers, reply = self.server.script[min(len(self.server.requests), len(self.server.script)) - 1]
        data = json.dumps(reply(body) if callable(reply) else reply).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def chat(url, **kw):
    return Chat(model="toy", base_url=url, api_key=KEY, backoff_initial=0.01, **kw)


def test_request_shape_and_logprobs_probabilities():
    top = {"3": math.log(0.7), "1": math.log(0.2), "x": math.log(0.05)}
    with OpenAIish([(200, {}, completion("3", top))]) as server:
        d = chat(server.url, input_price_per_million=1.0, output_price_per_million=2.0).decide(
            situation(history=(("look", "A kitchen."),), notes=("read the recipe",)))
        request = server.requests[0]
        assert request["headers"]["Authorization"] == f"Bearer {KEY}"
        body = request["body"]
        assert body["model"] == "toy" and body["logprobs"] is True and body["top_logprobs"] == 20
        assert body["messages"][0]["role"] == "system" and body["messages"][1]["role"] == "user"
        prompt = body["messages"][1]["content"]
        assert "1. open fridge\n2. eat trash can\n3. read cookbook" in prompt and "read the recipe" in prompt
        assert "> look: A kitchen." in prompt and "Moves:" not in prompt
    assert d.action == 2 and d.info["probabilities_from"] == "logprobs"
    # 0.7 and 0.2 listed; option 2 unlisted gets the unlisted mass 0.05
    assert np.allclose(d.probabilities, np.array([0.2, 0.05, 0.7]) / 0.95)
    assert d.usage.input_tokens == 50 and d.usage.output_tokens == 1
    assert d.usage.cost_usd == pytest.approx((50 * 1.0 + 1 * 2.0) / 1e6)


def test_without_logprobs_is_one_hot_on_the_answer():
    with OpenAIish([(200, {}, completion("Option 2."))]) as server:
        d = chat(server.url).decide(situation())
    assert d.probabilities.tolist() == [0, 1, 0] and d.info["probabilities_from"] == "reply"


def test_invalid_reply_is_retried_once_then_flat_odds():
    with OpenAIish([(200, {}, completion("I would eat the fridge")), (200, {}, completion("7"))]) as server:
        d = chat(server.url).decide(situation())
        assert len(server.requests) == 2
        assert "not one of the options" in server.requests[1]["body"]["messages"][-1]["content"]
    assert np.allclose(d.probabilities, 1 / 3) and d.info["invalid_replies"] == ["I would eat the fridge", "7"]
    assert d.usage.calls == 2 and d.usage.input_tokens == 100
    with OpenAIish([(200, {}, completion("nope")), (200, {}, completion("1"))]) as server:
        d = chat(server.url).decide(situation())
    assert d.action == 0 and d.info["invalid_replies"] == ["nope"]


def test_server_without_logprobs_support_is_asked_again_without_them():
    def reply(body):
        if "logprobs" in body:
            return {"error": {"message": "logprobs are not supported by this model"}}
        return completion("1")

    script = [(400, {}, reply), (200, {}, reply)]
    with OpenAIish(script) as server:
        policy = chat(server.url, max_retries=0)
        assert policy.decide(situation()).action == 0
        assert "logprobs" not in server.requests[1]["body"] and policy.logprobs is False


def test_http_failures_are_retried_then_typed():
    with OpenAIish([(401, {}, {"error": {"message": "bad key"}})]) as server:
        with pytest.raises(PolicyAuthError, match="401") as info:
            chat(server.url).decide(situation())
        assert len(server.requests) == 1 and KEY not in str(info.value)
    with OpenAIish([(429, {"retry-after": "0.05"}, {"error": "slow"}), (200, {}, completion("2"))]) as server:
        assert chat(server.url).decide(situation()).action == 1 and len(server.requests) == 2
    with OpenAIish([(429, {"retry-after-ms": "20"}, {"error": "slow"})]) as server:
        with pytest.raises(PolicyRateLimitError) as info:
            chat(server.url, max_retries=2).decide(situation())
        assert len(server.requests) == 3 and info.value.retry_after_s == pytest.approx(0.02)
    with OpenAIish([(502, {}, {"error": "gateway"})]) as server:
        with pytest.raises(PolicyServerError, match="502"):
            chat(server.url, max_retries=1).decide(situation())


def test_decide_many_and_plan():
    def by_last_option(body):
        n = body["messages"][-1]["content"].count("\n") and body["messages"][-1]["content"].rsplit("from 1 to ", 1)
        return completion(n[1].rstrip(".") if isinstance(n, list) else "1")

    with OpenAIish([(200, {}, by_last_option)]) as server:
        situations = [situation([f"m{i}" for i in range(k)]) for k in range(2, 9)]
        decisions = chat(server.url, max_concurrency=4).decide_many(situations)
        assert [d.action for d in decisions] == [k - 1 for k in range(2, 9)]
    with OpenAIish([(200, {}, completion("1. take cookbook\n2. read it"))]) as server:
        policy = chat(server.url)
        plan = policy.plan(situation(), "You are stuck. Make a plan.")
        assert plan.startswith("1. take cookbook") and policy.last_plan_usage.calls == 1
        body = server.requests[0]["body"]
        assert "logprobs" not in body and body["max_tokens"] == 300
        assert "You are stuck. Make a plan." in body["messages"][1]["content"]


def test_configuration_errors(monkeypatch):
    with pytest.raises(PolicyConfigError, match="OPENAI_API_KEY"):
        Chat(model="m")
    with pytest.raises(PolicyConfigError, match="MODEL_NAME"):
        Chat(base_url="http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.setenv("MODEL_NAME", "meta/llama")
    policy = Chat()
    assert policy.base_url == "https://openrouter.ai/api/v1" and policy.model == "meta/llama"
    assert KEY not in repr(policy) and KEY not in str(vars(policy))
