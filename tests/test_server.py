"""`s1 serve`: TypeSafe's wire format over real HTTP on loopback (policy uniform: no torch needed)."""

from __future__ import annotations

import argparse
import json

import httpx
import pytest
import typesafe_sdk as ts
import zstandard

from s1gym.server import add_arguments, make_server

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
