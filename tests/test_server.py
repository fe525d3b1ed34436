"""`s1 serve`: TypeSafe's wire format over real HTTP on loopback (policy uniform: no torch needed)."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import httpx
import numpy as np
import pytest
import typesafe_sdk as ts
import zstandard
from loopback import exchange, read_until_closed, status_of

from s1gym.core import BasePolicy, Decision
from s1gym.ui.serve import InsecureServeError, Limits, PortError, add_arguments, is_loopback, make_server

AUTH = {"Authorization": "Bearer any-key"}


@pytest.fixture(scope="module")
def server():
    with make_server("uniform") as srv:
        yield srv


def post(server, body, headers=AUTH, **kw):
    return httpx.post(server.url + "/v1/systemone", json=body, headers=headers, **kw)


def test_models_and_all_question_types_through_the_official_sdk(server):
    with ts.TypeSafeClient(api_key="anything", base_url=server.url) as client:
        assert [m.name for m in client.models.list().models] == ["s1gym-uniform"]
        r = client.system_one(
            state={"task": "tickets", "observation": "I was charged twice"},
            questions={
                "c": ts.Choice(instructions="topic?", criteria={"billing": "money", "tech": None, "ünï": None}),
                "n": ts.Noul(instructions="Is it about billing?"),
                "s": ts.Score(criteria=["low", "mid", "high"]),
            },
        )
    assert r.model == "s1gym-uniform" and r.usage.input_tokens > 0 and r.usage.output_tokens == 3
    assert r.choices["c"].choice == "billing" and set(r.choices["c"].probabilities) == {"billing", "tech", "ünï"}
    assert r.nouls["n"].noul == pytest.approx(0.5)
    assert r.scores["s"].score == pytest.approx(1.0) and r.scores["s"].legend == {0: "low", 1: "mid", 2: "high"}


def test_schema_violations_are_422_naming_the_field(server):
    cases = [
        ({"model": "m", "questions": {"q": {"type": "noul", "instructions": "x"}}}, ["body", "state"]),
        ({"model": "m", "state": "x", "questions": {}}, ["body", "questions"]),
        ({"model": "m", "state": "x", "questions": {"q": {"type": "choice"}}}, ["body", "questions", "q", "choice", "criteria"]),
        ({"model": "m", "state": "x", "questions": {"q": {"type": "choice", "criteria": {}}}}, ["body", "questions", "q", "choice", "criteria"]),
        ({"model": "m", "state": "x", "questions": {"q": {"type": "noul"}}}, ["body", "questions", "q", "noul"]),
        ({"model": "m", "state": "x", "questions": {"q": {"type": "box"}}}, ["body", "questions", "q", "box"]),
        ({"state": "x", "questions": {"q": {"type": "noul", "instructions": "x"}}}, ["body", "model"]),
    ]
    for body, loc in cases:
        r = post(server, body)
        assert r.status_code == 422, body
        assert r.json()["detail"][0]["loc"] == loc and r.json()["detail"][0]["msg"]
    r = httpx.post(server.url + "/v1/systemone", content=b"{not json", headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid"
    # the SDK turns the 422 into a typed error whose message names the field
    with ts.TypeSafeClient(api_key="k", base_url=server.url) as client:
        with pytest.raises(ts.TypeSafeUnprocessableEntityError, match="questions.q.box"):
            client.system_one(state="x", questions={"q": ts.Box(instructions="dog")})


def test_auth_paths_and_encodings(server):
    body = {"model": "m", "state": "x" * 3000, "questions": {"q": {"type": "choice", "criteria": {"a": None, "b": None}}}}
    assert post(server, body, headers={}).status_code == 401
    assert httpx.get(server.url + "/v1/models").status_code == 401
    assert httpx.get(server.url + "/nope", headers=AUTH).status_code == 404
    raw = json.dumps(body).encode()
    compressed = zstandard.ZstdCompressor().compress(raw)
    before = server.zstd_requests
    r = httpx.post(server.url + "/v1/systemone", content=compressed,
                   headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "zstd"})
    assert r.status_code == 200 and r.json()["answers"]["q"]["choice"] == "a"
    assert server.zstd_requests == before + 1
    r = httpx.post(server.url + "/v1/systemone", content=b"garbage",
                   headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "zstd"})
    assert r.status_code == 400 and "zstd" in r.json()["detail"]
    r = httpx.post(server.url + "/v1/systemone", content=raw,
                   headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "br"})
    assert r.status_code == 415


def test_required_key_and_cli_arguments():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--policy", "uniform", "--port", "0"])
    assert (args.policy, args.host, args.port, args.api_key) == ("uniform", "127.0.0.1", 0, None)
    with pytest.raises(ValueError, match="rule"):
        make_server("rule")
    with make_server("uniform", api_key="right-key") as srv:
        with ts.TypeSafeClient(api_key="wrong-key", base_url=srv.url) as client:
            with pytest.raises(ts.TypeSafeAuthenticationError):
                client.models.list()
        with ts.TypeSafeClient(api_key="right-key", base_url=srv.url) as client:
            assert client.models.list().models


def test_a_wrong_key_gets_a_401_that_says_nothing_about_the_key():
    with make_server("uniform", api_key="s3cret-key") as srv:
        answers = [
            httpx.get(srv.url + "/v1/models", headers={"Authorization": f"Bearer {key}"})
            for key in ("s3cret-kez", "s", "s3cret-key-and-more", "totally-different")
        ]
        right = httpx.get(srv.url + "/v1/models", headers={"Authorization": "Bearer s3cret-key"})
    assert [a.status_code for a in answers] == [401, 401, 401, 401]
    assert [a.json() for a in answers] == [{"detail": "Invalid API key"}] * 4  # one body whatever the near miss
    assert len({a.content for a in answers}) == 1
    assert right.status_code == 200


def test_loopback_hosts_are_told_apart_from_the_others():
    assert [is_loopback(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost", "LOCALHOST.")] == [True] * 6
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "10.1.2.3", "192.168.0.7", "example.org")] == [False] * 5


def test_serve_refuses_every_interface_without_a_key_unless_told_insecure():
    with pytest.raises(InsecureServeError, match="--api-key") as refused:
        make_server("uniform", host="0.0.0.0", port=0)
    assert isinstance(refused.value, ValueError)
    with make_server("uniform", host="0.0.0.0", port=0, api_key="k") as srv:  # a key: allowed
        assert srv.server_address[0] == "0.0.0.0"
    with make_server("uniform", host="0.0.0.0", port=0, insecure=True) as srv:  # said so: allowed
        assert srv.server_address[0] == "0.0.0.0"
    env = {k: v for k, v in os.environ.items() if k != "S1_SERVE_API_KEY"}
    cli = [sys.executable, "-m", "s1gym.ui.cli", "serve", "--policy", "uniform", "--host", "0.0.0.0", "--port", "0"]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 2
    assert done.stdout == ""  # refused before binding: no URL printed
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s1 serve: error: refusing to serve on '0.0.0.0' without an API key")
    assert "--insecure" in lines[0]


# ------------------------------------------------------------ hardening (issue 15)

POST_HEAD = "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n"


def choice(n, questions=1, state="x"):
    criteria = {f"take item {i}": None for i in range(n)}
    return {"model": "m", "state": state, "questions": {f"q{j}": {"type": "choice", "criteria": criteria} for j in range(questions)}}


class Slow(BasePolicy):
    """Flat odds after ``seconds`` of 'thinking' (a stand-in for a model's compute); counts its calls."""

    name = "slow"

    def __init__(self, seconds):
        self.seconds, self.calls, self.started = seconds, 0, threading.Event()

    def decide(self, situation):
        self.calls += 1
        self.started.set()
        time.sleep(self.seconds)
        n = len(situation.candidates)
        return Decision.from_probabilities(np.full(n, 1 / n))


def wait_until(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_bad_content_length_is_a_clean_400_or_411_and_the_connection_closes(server):
    address = server.server_address[:2]
    for header, status in [
        ("Content-Length: -5", 400),  # used to hold the connection: read(-5) waits for EOF
        ("Content-Length: abc", 400),  # used to be a 500 with Python's ValueError text
        ("Content-Length: 1e3", 400),
        ("Content-Length: +2", 400),
        ("Content-Length: 2\r\nContent-Length: 3", 400),
        ("Transfer-Encoding: chunked", 411),
        ("X-Nothing: 1", 411),
    ]:
        reply, closed = exchange(address, f"{POST_HEAD}{header}\r\n\r\n{{}}".encode(), timeout=5)
        assert status_of(reply) == status and closed, (header, reply[:200])
        detail = json.loads(reply.split(b"\r\n\r\n", 1)[1])["detail"]
        assert "Content-Length" in detail and "Error" not in detail, detail
    # the same connection serves the next good request (nothing was desynchronised by a good one)
    with httpx.Client(base_url=server.url, headers=AUTH) as client:
        for _ in range(3):
            assert client.post("/v1/systemone", json=choice(2)).status_code == 200


def test_json_nested_too_deep_is_422_not_a_recursion_error(server):
    deep = "[" * 10_000 + "]" * 10_000
    raw = '{"model": "m", "state": %s, "questions": {"q": {"type": "noul", "instructions": "x"}}}'
    for state in (deep, "[" * 65 + "]" * 65):
        r = httpx.post(server.url + "/v1/systemone", content=(raw % state).encode(),
                       headers={**AUTH, "Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_too_deep", r.text[:300]
        assert "64 levels" in r.json()["detail"][0]["msg"]
    r = httpx.post(server.url + "/v1/systemone", content=(raw % ("[" * 60 + "]" * 60)).encode(),
                   headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 200


def test_request_body_over_4_mib_is_413_also_after_zstd(server):
    limit = Limits().max_body_bytes
    assert limit == 4 * 1024 * 1024  # the documented default
    head = {"model": "m", "state": "", "questions": {"q": {"type": "noul", "instructions": "x"}}}

    def send(size):
        body = json.dumps({**head, "state": "a" * (size - len(json.dumps(head)))}).encode()
        assert len(body) == size
        return httpx.post(server.url + "/v1/systemone", content=body, headers={**AUTH, "Content-Type": "application/json"})

    assert send(limit).status_code == 200
    # one byte more: 413, and the client reads the answer (the server drained the body before closing)
    r = send(limit + 1)
    assert r.status_code == 413 and "--max-body-bytes" in r.json()["detail"]
    # a declared length far over the limit is refused before any of it is read
    reply, closed = exchange(server.server_address[:2], f"{POST_HEAD}Content-Length: {10**30}\r\n\r\n".encode())
    assert status_of(reply) == 413 and closed
    # a zstd bomb: 40 KiB on the wire, 5 MiB inflated
    bomb = zstandard.ZstdCompressor().compress(json.dumps({**head, "state": "a" * 5 * 2**20}).encode())
    assert len(bomb) < 64 * 1024
    r = httpx.post(server.url + "/v1/systemone", content=bomb,
                   headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "zstd"})
    assert r.status_code == 413 and "once decompressed" in r.json()["detail"]


def test_candidates_and_questions_are_capped_before_the_policy_runs():
    slow = Slow(0.5)
    with make_server(slow) as srv:
        started = time.monotonic()
        r = post(srv, choice(10_000), timeout=30)  # used to take 26 s with local, holding everyone up
        assert r.status_code == 422 and time.monotonic() - started < 5
        (error,) = r.json()["detail"]
        assert error["loc"] == ["body", "questions", "q0", "choice", "criteria"] and error["type"] == "too_long"
        assert "1024" in error["msg"] and "10000" in error["msg"] and "--max-candidates" in error["msg"]
        score = {"model": "m", "state": "x", "questions": {"s": {"type": "score", "criteria": ["l"] * 1025}}}
        assert post(srv, score).json()["detail"][0]["loc"] == ["body", "questions", "s", "score", "criteria"]
        r = post(srv, choice(2, questions=65))
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "questions"]
        assert slow.calls == 0  # nothing reached the policy
        # the SDK names the field in its error
        with ts.TypeSafeClient(api_key="k", base_url=srv.url) as client:
            with pytest.raises(ts.TypeSafeUnprocessableEntityError, match="criteria"):
                client.system_one(state="x", questions={"q": ts.Choice(criteria={str(i): None for i in range(1025)})})
    with make_server("uniform") as srv:  # exactly at the caps is served
        r = post(srv, choice(1024, questions=2), timeout=60)
        assert r.status_code == 200 and len(r.json()["answers"]["q1"]["probabilities"]) == 1024


def test_a_client_asking_many_questions_does_not_hold_up_the_others():
    slow = Slow(0.3)
    with make_server(slow) as srv:
        done = {}

        def big():
            r = post(srv, choice(3, questions=6), timeout=60)  # six decisions, one after another
            done["big"] = (time.monotonic(), r.status_code)

        worker = threading.Thread(target=big)
        worker.start()
        assert slow.started.wait(10)
        r = httpx.get(srv.url + "/v1/models", headers=AUTH, timeout=60)  # no decision: answered at once
        done["models"] = (time.monotonic(), r.status_code)
        r = post(srv, choice(2), timeout=60)  # queued behind the decision in progress, not the other five
        done["small"] = (time.monotonic(), r.status_code)
        worker.join(60)
    assert [status for _, status in done.values()] == [200, 200, 200]
    assert done["models"][0] < done["small"][0] < done["big"][0]
    assert slow.calls == 7


def test_half_sent_requests_time_out_and_connections_are_bounded():
    limits = Limits(timeout=1.0, max_connections=8)
    with make_server("uniform", limits=limits) as srv:
        address = srv.server_address[:2]
        held = [socket.create_connection(address, timeout=10) for _ in range(8)]
        for sock in held[:4]:
            sock.sendall(POST_HEAD.encode())  # headers never finished
        for sock in held[4:]:
            sock.sendall(f"{POST_HEAD}Content-Length: 100\r\n\r\n{{".encode())  # body never finished
        assert wait_until(lambda: srv.open_connections == 8, 10)
        # the ninth and later connections are refused at once, with a reason and Retry-After
        for _ in range(3):
            reply, closed = exchange(address, f"{POST_HEAD}Content-Length: 2\r\n\r\n{{}}".encode(), timeout=5)
            assert status_of(reply) == 503 and b"Retry-After: 1" in reply and closed
        # the SDK retries the 503 and gets through once the timeout frees a slot
        with ts.TypeSafeClient(api_key="k", base_url=srv.url,
                               retry=ts.RetryPolicy(max_retries=20, backoff_max=0.5, timeout=60)) as client:
            assert client.system_one(state="x", questions={"q": ts.Noul(instructions="ok?")}).nouls["q"].noul == 0.5
        # every half-sent request was ended by the server: a 408 when the headers had arrived
        replies = [read_until_closed(sock, 10) for sock in held]
        assert all(closed for _, closed in replies)
        assert [status_of(reply) for reply, _ in replies] == [None] * 4 + [408] * 4
        for sock in held:
            sock.close()
        # a trickle (a byte every 0.2 s) does not extend the deadline
        with socket.create_connection(address, timeout=10) as sock:
            started, closed = time.monotonic(), False
            for byte in POST_HEAD.encode() * 3:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    closed = True
                    break
                if read_until_closed(sock, 0.2)[1]:
                    closed = True
                    break
                assert time.monotonic() - started < 10
            assert closed and time.monotonic() - started < 5
        assert wait_until(lambda: srv.open_connections == 0, 10)


def test_clients_that_hang_up_do_not_flood_the_log_with_tracebacks(capfd, caplog):
    slow = Slow(0.02)
    body = json.dumps(choice(2)).encode()
    with caplog.at_level(logging.DEBUG, logger="s1gym.ui.serve"), make_server(slow) as srv:
        for _ in range(30):  # send a request, then reset the connection before the answer comes
            sock = socket.create_connection(srv.server_address[:2])
            sock.sendall(f"{POST_HEAD}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        assert wait_until(lambda: slow.calls == 30 and srv.open_connections == 0, 30)
        assert post(srv, choice(2)).status_code == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err, err[:2000]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text[:2000]
    assert any("connection ended" in r.getMessage() for r in caplog.records)  # seen, at debug level


def test_a_busy_port_is_one_line_naming_the_port_and_the_fix(server):
    port = server.server_address[1]
    with pytest.raises(PortError, match=f"port {port} .* in use .*--port") as caught:
        make_server("uniform", port=port)
    assert caught.value.errno == errno.EADDRINUSE and f"pid {os.getpid()} " in str(caught.value)
    done = subprocess.run([sys.executable, "-m", "s1gym.ui.cli", "serve", "--policy", "uniform", "--port", str(port)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("s1 serve: error: port ") and str(port) in line and "--port" in line and f"pid {os.getpid()}" in line


def test_serve_help_documents_the_limits():
    done = subprocess.run([sys.executable, "-m", "s1gym.ui.cli", "serve", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for text in ("--max-body-bytes", "4 MiB", "--max-candidates", "1024", "--max-questions", "--timeout",
                 "--max-connections", "64 levels", "413", "422", "408", "503"):
        assert text in done.stdout, text
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    for bad in (["--port", "70000"], ["--max-candidates", "0"], ["--timeout", "nan"], ["--timeout", "-1"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
