"""Chat against a small OpenAI-compatible server on loopback that checks the request shape."""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest
from loopback import ScriptedServer
from s1gym.policies import (
    Chat,
    PolicyAuthError,
    PolicyConfigError,
    PolicyRateLimitError,
    PolicyResponseError,
    PolicyServerError,
    PolicyTimeoutError,
)

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
            self.server.requests.append({"headers": dict(self.headers), "body": body, "port": self.client_address[1]})
            status, headers, reply = self.server.script[min(len(self.server.requests), len(self.server.script)) - 1]
        reply = reply(body) if callable(reply) else reply
        # bytes go out as they are (an HTML error page from a proxy), without Content-Length (read to close)
        raw = isinstance(reply, bytes)
        data = reply if raw else json.dumps(reply).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/html" if raw else "application/json")
        if raw:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
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
        # llama.cpp's grammar first (constraint "auto"), with enough alternatives to list the option digits
        assert body["model"] == "toy" and body["logprobs"] is True and body["top_logprobs"] == 200
        assert body["grammar"] == 'root ::= "1" | "2" | "3"' and len(server.requests) == 1
        assert body["messages"][0]["role"] == "system" and body["messages"][1]["role"] == "user"
        prompt = body["messages"][1]["content"]
        assert "1. open fridge\n2. eat trash can\n3. read cookbook" in prompt and "read the recipe" in prompt
        assert "> look: A kitchen." in prompt and "Moves:" not in prompt
    assert d.action == 2 and d.info["probabilities_from"] == "logprobs"
    assert (d.info["mode"], d.info["constraint"], d.info["invalid"]) == ("logprobs", "grammar", 0)
    # 0.7 and 0.2 listed; option 2 unlisted gets the unlisted mass 0.05
    assert np.allclose(d.probabilities, np.array([0.2, 0.05, 0.7]) / 0.95)
    assert d.usage.input_tokens == 50 and d.usage.output_tokens == 1
    assert d.usage.cost_usd == pytest.approx((50 * 1.0 + 1 * 2.0) / 1e6)


def test_without_logprobs_is_one_hot_on_the_answer():
    with OpenAIish([(200, {}, completion("Option 2."))]) as server:
        d = chat(server.url).decide(situation())
    assert d.probabilities.tolist() == [0, 1, 0] and d.info["probabilities_from"] == "reply"
    assert d.info["mode"] == "choice" and d.info["constraint"] == "grammar"


def test_invalid_reply_is_retried_once_then_flat_odds():
    with OpenAIish([(200, {}, completion("I would eat the fridge")), (200, {}, completion("7"))]) as server:
        d = chat(server.url, constraint="none").decide(situation())
        assert len(server.requests) == 2
        assert "not one of the options" in server.requests[1]["body"]["messages"][-1]["content"]
    assert np.allclose(d.probabilities, 1 / 3) and d.info["invalid_replies"] == ["I would eat the fridge", "7"]
    assert (d.info["mode"], d.info["invalid"], d.info["fallback"]) == ("free", 2, "flat odds")
    assert d.usage.calls == 2 and d.usage.input_tokens == 100
    with OpenAIish([(200, {}, completion("nope")), (200, {}, completion("1"))]) as server:
        d = chat(server.url, constraint="none").decide(situation())
    assert d.action == 0 and d.info["invalid_replies"] == ["nope"]


def test_server_without_logprobs_support_is_asked_again_without_them():
    def reply(body):
        if "logprobs" in body:
            return {"error": {"message": "logprobs are not supported by this model"}}
        return completion("1")

    script = [(400, {}, reply), (200, {}, reply)]
    with OpenAIish(script) as server:
        policy = chat(server.url, max_retries=0, constraint="none")
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


def test_replies_a_server_really_sends_null_content_cut_replies_and_no_usage():
    """``content: null`` with ``finish_reason: "length"`` and no ``usage`` (what servers send when max_tokens
    cuts a reply before any text, e.g. a reasoning model), then a bare answer without usage either."""
    cut = {"id": "x", "object": "chat.completion", "model": "toy",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "length"}]}
    answer = completion("2")
    del answer["usage"]
    with OpenAIish([(200, {}, cut), (200, {}, answer)]) as server:
        d = chat(server.url, input_price_per_million=1.0, constraint="none").decide(situation())
        assert server.requests[1]["body"]["messages"][-2] == {"role": "assistant", "content": ""}
    assert d.action == 1 and d.info["invalid_replies"] == [""] and d.info["cut_by_max_tokens"] == 1
    assert d.info["usage_missing"] is True and d.usage.calls == 2
    assert (d.usage.input_tokens, d.usage.output_tokens, d.usage.cost_usd) == (0, 0, 0.0)
    weird = completion("3")
    weird["usage"] = {"prompt_tokens": "n/a", "completion_tokens": None}
    with OpenAIish([(200, {}, weird)]) as server:
        d = chat(server.url).decide(situation())
    assert d.action == 2 and (d.usage.input_tokens, d.usage.output_tokens) == (0, 0) and "usage_missing" not in d.info


def test_a_proxy_html_502_is_retried_then_typed():
    page = b"<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>"
    with OpenAIish([(502, {}, page), (200, {}, completion("1"))]) as server:
        assert chat(server.url).decide(situation()).action == 0 and len(server.requests) == 2
    with OpenAIish([(502, {}, page)]) as server:
        with pytest.raises(PolicyServerError, match="HTTP 502: <html>.*502 Bad Gateway.*after 1 retries"):
            chat(server.url, max_retries=1).decide(situation())
        assert len(server.requests) == 2
    with OpenAIish([(200, {}, b"upstream sent garbage")]) as server:
        with pytest.raises(PolicyResponseError, match="not JSON: 'upstream sent garbage'"):
            chat(server.url).decide(situation())
        assert len(server.requests) == 1  # a 200 that is not JSON is not retried


def test_a_server_that_does_not_answer_in_time_is_a_timeout():
    def slow(body):
        time.sleep(1.0)
        return completion("1")

    with OpenAIish([(200, {}, slow)]) as server:
        policy = chat(server.url, timeout=0.2, max_retries=1)
        with pytest.raises(PolicyTimeoutError, match="timed out after 0.2 s.*after 1 retries"):
            policy.decide(situation())
        deadline = time.monotonic() + 5
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) == 2
        with pytest.raises(PolicyTimeoutError):  # the async driver shares the same retry loop
            policy.decide_many([situation(), situation()])


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


def test_decide_many_overlaps_within_its_bound_on_kept_alive_connections():
    lock, in_flight, peak = threading.Lock(), [0], [0]

    def slow(body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.1)
        with lock:
            in_flight[0] -= 1
        return completion("2")

    with OpenAIish([(200, {}, slow)]) as server:
        policy = chat(server.url, max_concurrency=3)
        for _ in range(2):
            decisions = policy.decide_many([situation() for _ in range(7)])
            assert [d.action for d in decisions] == [1] * 7
        # the first decision detected the server's mode alone; the rest overlapped, at most 3 at a time, and
        # every request went over one of the policy's kept-alive connections (one per thread at most)
        assert len(server.requests) == 14 and 2 <= peak[0] <= 3
        assert len({r["port"] for r in server.requests}) <= 3


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


def _token(text, alternatives):
    return {"token": text, "logprob": math.log(alternatives[text]),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]}


def test_probabilities_follow_a_number_split_into_digit_tokens():
    from s1gym.policies.chat import probabilities_from_logprobs

    # "12" of 12 options as Gemma and Llama write it: "1" then "2". After "1": "2" goes on to 12, "0" to 10,
    # the end token stops at 1; the 5 % the second position did not list is shared by 1, 10, 11 and 12.
    tokens = [_token("1", {"1": 0.8, "2": 0.1}), _token("2", {"2": 0.5, "0": 0.2, "<eos>": 0.25})]
    p, source = probabilities_from_logprobs(tokens, "12", 11, 12)
    expected = np.full(12, 0.1 / 7)  # the first position's unlisted 10 % goes to the options given nothing
    expected[[0, 1, 9, 10, 11]] = [0.8 * 0.25 + 0.01, 0.1, 0.8 * 0.2 + 0.01, 0.01, 0.8 * 0.5 + 0.01]
    assert source == "logprobs" and np.allclose(p, expected)
    # a leading space, and a reply that goes on after its number ("3." with the end after "3")
    p, _ = probabilities_from_logprobs([_token(" 2", {" 2": 0.6, " 1": 0.3})], " 2", 1, 3)
    assert np.allclose(p, [0.3, 0.6, 0.1])
    p, _ = probabilities_from_logprobs([_token("1", {"1": 1.0}), _token(".", {".": 0.75, "1": 0.25})], "1.", 0, 12)
    assert np.allclose(p[[0, 10]], [0.75, 0.25]) and p.sum() == pytest.approx(1.0)
    # the chosen token missing from its alternatives (a grammar forced it): its own logprob carries the path
    forced = [{"token": "3", "logprob": math.log(0.4), "top_logprobs": [{"token": "1", "logprob": math.log(0.5)}]}]
    p, _ = probabilities_from_logprobs(forced, "3", 2, 3)
    assert np.allclose(p, np.array([0.5, 0.1, 0.4]) / 1.0)
    # words first: no reading of the tokens, one-hot on the parsed answer
    p, source = probabilities_from_logprobs([_token("Option", {"Option": 1.0}), _token(" 2", {" 2": 1.0})],
                                            "Option 2", 1, 3)
    assert source == "reply" and p.tolist() == [0, 1, 0]


def test_a_model_that_would_rather_write_words_does_not_hand_that_mass_to_unnamed_options():
    """What Gemma 3 270M on llama.cpp sent for " 3" (a grammar forced a number): the first digit position
    lists mostly markup and newlines. The 48 % it did not list could not all be option 2's: each unlisted
    token is at most as likely as the least likely listed one (5.6 %)."""
    from s1gym.policies.chat import probabilities_from_logprobs

    listed = {"1": 0.146, "<b>": 0.113, "\n": 0.100, "\n\n": 0.085, "<h3>": 0.056, "3": 0.020}
    tokens = [_token(" ", {" ": 0.006, "\n": 0.39}), _token("3", listed)]
    p, source = probabilities_from_logprobs(tokens, " 3", 2, 3)
    assert source == "logprobs" and np.allclose(p, np.array([0.146, 0.056, 0.020]) / 0.222)


def test_the_first_decision_finds_the_constraint_the_server_honours_and_keeps_it():
    """An OpenAI-like server: ``grammar`` is an unknown argument (400), ``guided_choice`` is dropped (the
    model writes prose), a JSON schema holds. The first decision tries them in that order; the next asks
    with the schema at once."""
    def openai_like(body):
        if "grammar" in body:
            return {"error": {"message": "Unrecognized request argument supplied: grammar"}}
        if "response_format" in body:
            assert body["response_format"]["json_schema"]["schema"]["properties"]["option"]["enum"] == [1, 2, 3]
            return completion('{"option": 2}')
        return completion("I think the fridge")

    with OpenAIish([(400, {}, openai_like), (200, {}, openai_like), (200, {}, openai_like),
                    (200, {}, openai_like)]) as server:
        policy = chat(server.url)
        d = policy.decide(situation())
        assert len(server.requests) == 3 and "guided_choice" in server.requests[1]["body"]
        assert (d.action, d.info["mode"], d.info["constraint"], d.info["invalid"]) == (1, "choice", "json_schema", 0)
        assert [t.split(":")[0] for t in d.info["constraints_tried"]] == ["grammar", "guided_choice"]
        assert d.usage.calls == 2 and policy.detected == "json_schema"
        d = policy.decide(situation())
        assert len(server.requests) == 4 and "response_format" in server.requests[3]["body"]
        assert d.action == 1 and "constraints_tried" not in d.info


def test_vllm_guided_choice_with_logprobs_and_the_server_timings():
    top = {"2": math.log(0.6), "1": math.log(0.3), "3": math.log(0.1)}

    def vllm_like(body):
        if "grammar" in body:
            return completion("Sure! The answer")  # an unknown field dropped: prose
        assert body["guided_choice"] == ["1", "2", "3"] and body["top_logprobs"] == 20
        reply = completion("2", top)
        reply["timings"] = {"prompt_ms": 120.0, "predicted_ms": 30.0}
        return reply

    with OpenAIish([(200, {}, vllm_like)]) as server:
        d = chat(server.url).decide(situation())
    assert (d.info["mode"], d.info["constraint"]) == ("logprobs", "guided_choice")
    assert np.allclose(d.probabilities, [0.3, 0.6, 0.1]) and d.info["server_s"] == pytest.approx(0.15)


def test_a_server_that_honours_no_constraint_gets_free_text_with_invalid_replies_counted():
    def plain(body):
        return completion("nope" if "grammar" in body or "guided_choice" in body else "3")

    with OpenAIish([(200, {}, plain), (200, {}, plain), (422, {}, {"detail": "response_format"}),
                    (200, {}, plain)]) as server:
        policy = chat(server.url)
        d = policy.decide(situation())
        assert len(server.requests) == 4 and policy.detected == "none"
        assert (d.action, d.info["mode"], d.info["invalid"]) == (2, "free", 0)
        policy.decide(situation())
        body = server.requests[4]["body"]
        assert not {"grammar", "guided_choice", "response_format"} & set(body)


def test_more_alternatives_than_the_server_lists_are_asked_again_with_top_logprobs():
    def capped(body):
        if body.get("top_logprobs", 0) > 20:
            return {"error": {"message": "top_logprobs must be at most 20"}}
        return completion("1", {"1": math.log(0.9)})

    with OpenAIish([(400, {}, capped), (200, {}, capped)]) as server:
        policy = chat(server.url, max_retries=0)
        d = policy.decide(situation())
        assert server.requests[1]["body"]["top_logprobs"] == 20 and policy.logprobs is True
    assert d.info["mode"] == "logprobs" and d.action == 0


def test_a_constraint_in_extra_body_is_kept_and_a_bad_constraint_is_refused():
    with OpenAIish([(200, {}, completion("2"))]) as server:
        policy = chat(server.url, extra_body={"grammar": 'root ::= "2"'})
        assert policy.detected == "grammar" and policy.decide(situation()).action == 1
        assert server.requests[0]["body"]["grammar"] == 'root ::= "2"' and len(server.requests) == 1
    with pytest.raises(ValueError, match="constraint"):
        chat("http://127.0.0.1:1/v1", constraint="regex")


def test_a_llama_cpp_server_without_logits_all_is_asked_again_without_logprobs():
    """llama-cpp-python started with ``--logits_all False`` answers a logprobs request with a 500."""
    def server_side(body):
        if "logprobs" in body:
            return {"error": {"message": "logprobs is not supported for models created with logits_all=False"}}
        return completion("3")

    with OpenAIish([(500, {}, server_side), (200, {}, server_side)]) as server:
        policy = chat(server.url, max_retries=0)
        d = policy.decide(situation())
        assert len(server.requests) == 2 and "logprobs" not in server.requests[1]["body"]
    assert (d.action, d.info["mode"], d.info["constraint"], policy.logprobs) == (2, "choice", "grammar", False)
