"""The web tasks (MiniWoB++ in Chromium through Playwright): every task's rule and Search rows, Flights,
fork determinism, step cost, candidate caps.

    python bench/web.py --rules              # the rule on every task with one (seeds 31000-31009)
    python bench/web.py --search             # Search(Uniform) on every offered task (seeds 32000-32002)
    python bench/web.py --search --games 1   # the same, one game a task (seed 32000; fourth amendment)
    python bench/web.py --flights            # Search(Uniform, budget=20) on Flights (seeds 33000-33019)
    python bench/web.py --forks 10000        # fork-and-replay checks across the tasks (walks from seed 34000)
    python bench/web.py --steps              # env.step on the click tasks vs a bare Playwright click (seeds 35000-35019)
    python bench/web.py --caps --seeds 10    # most candidates met per task (random and rule play, seeds 0..)
    python bench/web.py --workers            # steps per second with 1 and 2 worker processes
    python bench/web.py --memo-check 100     # memoryless pages: answers from MEMO against real pages (seeds 37000-37001)
    python bench/web.py --fork-cost          # a fork's first step against a step, the ten slowest tasks (seeds 38000-38002)
    python bench/web.py --ab --out DIR       # Search(Uniform) on the A/B sample (issue 37; seed 36000)
    python bench/web.py --compare A B        # the A/B sample's games in out dirs A and B, move by move

Protocol, fixed before any of these runs (seeds disjoint from tests/test_web_pages.py, which plays seeds 0-9):

- **--rules**: ``s1gym.evaluate(task, "rule")`` on every task with a rule solver, seeds 31000-31009
  (10 episodes). Row: wins, mean steps, wall seconds a game. Target: 10/10 everywhere.
- **--search**: ``Search(Uniform(), budget=20, episode_budget=20)`` on every offered task, seeds
  32000-32002 (3 episodes; the episode budget of 20 inner calls, one search's worth, bounds a game
  that finds nothing: a task with 100 candidates costs 2,000 page steps a search). Row: wins, mean
  inner-policy calls a game, wall seconds a game. (Amended before any run: 5 seeds and an episode
  budget of 100 would have taken days on this shared machine. Added after the first five tasks ran, read
  from the same trials' episode files, nothing re-run: Search's expansions and generated children a game,
  since a forced move or a win found while expanding costs Uniform no call.) Second amendment (2026-12-01,
  before the other 112 tasks ran): ``max_expansions=20`` a search (as many nodes as it may ask about).
  choose-date showed why: a node whose moves all but one lead to states already seen is a forced move and
  costs no call, so a search chained free expansions (pick a date, reopen the picker, pick another...)
  each generating ~33 children, and its first game ran for more than 17 minutes; with the cap one game
  took 40 s. The five rows already measured are unchanged by it: none of their games made more than 14
  expansions in all its searches.
  Third amendment (2026-12-02, before any game of the tasks it names had finished): the six tasks no
  earlier run measured whose stated cap N is above 60 (simple-algebra 216, scroll-text 128,
  simple-arithmetic 104, social-media-all 96, social-media-some 96, social-media 64) play one game, seed
  32000, not three (the tasks with such caps measured before, choose-date and email-inbox among them, took
  at most 4 minutes a game and keep three). A search expands up to 20
  nodes of up to N children, each a page step (0.3-0.5 s at load ~7), so one such game costs 10-35
  minutes; simple-algebra's first game had not ended after 32 minutes, and three games of the six would
  not fit the session. Their rows say 1 game.
- **--flights**: ``Search(Uniform(), budget=20)`` (no episode budget: the issue's setting) on
  ``s1/Flights-v0``, seeds 33000-33019 (20 games). Targets: >= 90 % won, <= 60 s a game (mean).
- **--forks N**: N fork-and-replay checks. Tasks in catalogue order, round robin; per task a seeded
  random walk (seed 34000 + k for the task's k-th walk): at each state a move is drawn (seeded); a fork
  of the state plays it on another page (restored by an in-document restart and replay; the answer
  cache is off for the check) and the walk's own env plays it on its page; the two answers (page text,
  moves, reward, end, and since 2026-12-01 the digest of what the text leaves out that the state key holds)
  must be equal. Every 10th check also replays the fork's moves on a freshly loaded
  page (a new browser context) and compares that answer too. A check that differs is a divergence.
  Target: 0 divergences over 10,000 checks.
- **--steps**: on click tasks (click-button, click-link, click-dialog, click-test-2, click-tab,
  click-option, click-color, click-widget), seeds 35000-35019, each episode's first click move played
  through ``env.step`` (act, page time, read the moves, ARIA snapshot) and, on a second page at the
  same state, as a bare Playwright ``locator.click()`` of the same element (no read). Medians and
  their ratio. Target: median env.step <= 50 ms.

Fourth amendment (issue 37, "Search at the page's speed"; written and committed before any run of it):

- **--search, one game a task**: the all-tasks rerun that times ``Search(Uniform(), budget=20)`` at the
  page's speed plays one game of every offered task, seed 32000 (the protocol's first seed), same options
  (episode budget 20, ``max_expansions=20``). Target: <= 5 minutes a game on every task. Row as before, plus
  the load average at the row's end; cold for each task's first (here only) game.
- **--ab**: the same Search on a sample that covers the engine's kinds of move, one game each, seed 36000
  (never played by any earlier run): book-flight (date picks, autocomplete), click-checkboxes, click-menu
  (pointing), click-pie and form-sequence-3 (pages loaded again for each episode), copy-paste (keys),
  drag-sort-numbers (drags), email-inbox-forward-nl, login-user (typing), scroll-text-2 (scrolls),
  simple-arithmetic, social-media-some, terminal (key by key), text-editor (highlights), use-autocomplete,
  use-slider (keys anywhere), choose-date-easy, find-word. Played once with the code before (the main
  branch at the start of the work) and once after, into two out dirs; ``--compare`` reads both dirs'
  episode files. Target: every game's moves identical, and the observations they were chosen at, Search's
  counts at each decision (expansions, children, calls, duplicates, why it stopped), its win, score and steps.
- **--memo-check N**: on every memoryless task (catalogue), one ``Search(Uniform)`` game (the --search
  options) on each of seeds 37000-37001; of the children it took from the memoryless pages' memory
  (``MEMO``: the answer a page that showed the same gave to the same move), up to N a game (drawn with
  ``random.Random(37000)``) are stepped again on a freshly loaded page along their own moves, and the two
  answers compared (page text, moves, end, reward, the hidden digest and the keys it is remembered under).
  Target: 0 differences.

Issue 55, "forks at a step's cost" (written 2026-12-06 05:11 UTC, before any run of it):

- **--fork-cost**: on the ten tasks whose Search(Uniform) game took longest in the fourth amendment's
  all-tasks run (:data:`SLOWEST_TEN`, read off ``docs/data/web_search_speed.jsonl``, rows ``all-tasks``),
  seeds 38000-38002 (never played before), a seeded random walk of up to :data:`FORK_COST_DEPTH` moves
  from each seed's start (``random.Random(seed)``, the moves of the page in its order). At each state the
  walk draws a move and times, back to back: a first fork stepping it on the page that holds the state
  (the fork takes that page, what a search's first child does: a *step*), then a second fork stepping it
  on another page (restored by an in-document restart, or a page load where the catalogue says so, and
  the moves replayed: a *fork's first step*), which then plays one more drawn move untimed so its page
  does not hold the walk's next state. The answer cache and the memoryless pages' memory are off, so every
  answer comes from a page. The walk goes on from the first fork. Reported per task and over all:
  the median of the per-state ratios (fork's first step / step), and by depth (1-3, 4-6, 7+). Target
  (issue 55): <= 5x on each of the ten tasks.

Latencies are wall clock on a shared machine: the load average is printed with every figure, and
ratios measured in the same run are what to compare.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import s1gym
from s1gym.engines import browser
from s1gym.engines.base import pool_stats
from s1gym.jobs.episodes import read_episode
from s1gym.tasks.web.engine import WebEngine, WebGame
from s1gym.tasks.web.env import WEB_TASKS
from s1gym.tasks.web.expert import SOLVERS

RULE_SEEDS = (31000, 10)
SEARCH_SEEDS = (32000, 3)
FLIGHTS_SEEDS = (33000, 20)
FORK_SEED = 34000
STEP_SEEDS = (35000, 20)
CLICK_TASKS = ["click-button", "click-link", "click-dialog", "click-test-2", "click-tab", "click-option",
               "click-color", "click-widget"]
SEARCH = {"budget": 20, "wrapper_options": {"episode_budget": 20, "max_expansions": 20}}
#: the third amendment: tasks that play one game of Search(Uniform), not three
#: the fourth amendment's A/B sample (one game each, seed AB_SEED)
AB_TASKS = ("book-flight", "click-checkboxes", "click-menu", "click-pie", "form-sequence-3", "copy-paste",
            "drag-sort-numbers", "email-inbox-forward-nl", "login-user", "scroll-text-2", "simple-arithmetic",
            "social-media-some", "terminal", "text-editor", "use-autocomplete", "use-slider", "choose-date-easy",
            "find-word")
AB_SEED = 36000
MEMO_SEEDS = (37000, 2)
FORK_COST_SEEDS = (38000, 3)
FORK_COST_DEPTH = 10
#: the ten slowest games of the all-tasks Search(Uniform) run (docs/data/web_search_speed.jsonl), slowest first
SLOWEST_TEN = ("social-media-some", "simon-says", "drag-shapes-2", "scroll-text", "drag-sort-numbers",
               "social-media-all", "form-sequence-3", "simple-algebra", "read-table-2", "number-checkboxes")
SEARCH_ONE_GAME = ("simple-algebra", "scroll-text", "simple-arithmetic", "social-media-all", "social-media-some",
                   "social-media")


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def trial_seconds(job_dir: Path) -> float | None:
    """Mean seconds a trial took, from the trials' own start and end (right for a resumed job too)."""
    spans = []
    for path in job_dir.glob("*/result.json"):
        r = json.loads(path.read_text())
        if r.get("started_at") and r.get("finished_at"):
            a, b = (dt.datetime.fromisoformat(r[k]) for k in ("started_at", "finished_at"))
            spans.append((b - a).total_seconds())
    return statistics.mean(spans) if spans else None


def search_work(job_dir: Path) -> dict[str, float]:
    """Search's own counts a game, from the trials' episode files: expansions and generated children (each a
    fork stepped on a page, or answered from the cache); Uniform's calls alone understate the work (a move
    forced, or a win found while expanding, costs no call)."""
    games = [read_episode(p) for p in job_dir.glob("*/agent/episode.json")]
    if not games:
        return {}
    total = {"expansions": 0, "generated": 0}
    for game in games:
        for tick in game.get("ticks", []):
            for key in total:
                total[key] += (tick.get("info") or {}).get(key) or 0
    return {f"{key}_per_game": round(value / len(games), 1) for key, value in total.items()}


def resumable(out: Path, job: str) -> bool:
    """Resume ``job`` only when its folder exists (``evaluate(resume=True)`` refuses a job it cannot find)."""
    return (out / job).is_dir()


def row(out: Path, task: str, label: str, policy: str, wrappers: list[str], seeds: tuple[int, int], **extra) -> dict:
    start = time.perf_counter()
    summary = s1gym.evaluate(
        "MiniWoB", policy, wrappers=wrappers, episodes=seeds[1], seed=seeds[0], options={"task": task},
        out=out, job=f"{task}-{label}", resume=resumable(out, f"{task}-{label}"), **extra,
    )
    wall = time.perf_counter() - start
    result = {
        "task": task,
        "policy": label,
        "episodes": summary["episodes"],
        "wins": summary["wins"],
        "errors": summary["errors"],
        "mean_steps": summary.get("mean_steps"),
        "calls_per_game": (summary.get("calls") or 0) / max(1, summary["episodes"]),
        "s_per_game": trial_seconds(Path(summary["job_dir"])) or wall / max(1, summary["episodes"]),
        "load": os.getloadavg()[0],
    }
    if wrappers == ["search"]:
        result.update(search_work(Path(summary["job_dir"])))
    print(json.dumps(result), flush=True)
    return result


def rules(out: Path, tasks: list[str]) -> None:
    for task in tasks:
        if task in SOLVERS:
            row(out, task, "Rule", "rule", [], RULE_SEEDS)


def search(out: Path, tasks: list[str], games: int | None = None) -> None:
    """``games``: that many games a task (the fourth amendment's rerun: 1), else the protocol's."""
    for task in tasks:
        seeds = (SEARCH_SEEDS[0], 1) if task in SEARCH_ONE_GAME else SEARCH_SEEDS
        seeds = (seeds[0], games) if games else seeds
        row(out, task, "Search(Uniform)", "uniform", ["search"], seeds, **SEARCH)


def flights(out: Path) -> None:
    start = time.perf_counter()
    summary = s1gym.evaluate(
        "Flights", "uniform", wrappers=["search"], budget=20, episodes=FLIGHTS_SEEDS[1], seed=FLIGHTS_SEEDS[0],
        out=out, job="flights-search-uniform-20", resume=resumable(out, "flights-search-uniform-20"),
    )
    wall = time.perf_counter() - start
    print(json.dumps({"task": "Flights", "policy": "Search(Uniform, budget=20)", "wins": summary["wins"],
                      "episodes": summary["episodes"], "errors": summary["errors"],
                      "calls_per_game": (summary.get("calls") or 0) / summary["episodes"],
                      "s_per_game": wall / summary["episodes"], "load": os.getloadavg()[0]}), flush=True)


def ab(out: Path, tasks: list[str]) -> None:
    """The A/B sample's games (fourth amendment): the rows of ``search`` on one seed."""
    for task in tasks:
        row(out, task, "Search(Uniform)", "uniform", ["search"], (AB_SEED, 1), **SEARCH)


#: what the A/B compares in each decision of a game, besides its move and observation: Search's own counts
AB_SEARCH_COUNTS = ("expansions", "generated", "policy_calls", "duplicates", "stop_reason")


def episodes_of(out: Path) -> dict[str, dict]:
    """Each A/B game in ``out`` by task (from the episode files): its moves, the observations they were chosen
    at, Search's counts at each decision, and the end (win, score, steps)."""
    games = {}
    for path in sorted(out.glob("*-Search(Uniform)/*/agent/episode.json")):
        episode = read_episode(path)
        ticks = episode.get("ticks", [])
        games[path.parents[2].name.removesuffix("-Search(Uniform)")] = {
            "moves": [tick["move"] for tick in ticks],
            "observations": [tick["observation"] for tick in ticks],
            "search": [[(tick.get("info") or {}).get(k) for k in AB_SEARCH_COUNTS] for tick in ticks],
            **{k: episode["final"].get(k) for k in ("won", "score", "steps")},
        }
    return games


def compare(before: Path, after: Path) -> None:
    """The A/B: the same games in two out dirs, move by move."""
    a, b = episodes_of(before), episodes_of(after)
    same = 0
    for task in sorted(set(a) | set(b)):
        if task not in a or task not in b:
            print(f"{task:28s} only in {'before' if task in a else 'after'}")
            continue
        ok = a[task] == b[task]
        same += ok
        differ = [k for k in a[task] if a[task][k] != b[task][k]]
        print(f"{task:28s} {'identical' if ok else 'DIFFERENT (' + ', '.join(differ) + ')'}: "
              f"{len(b[task]['moves'])} moves, won {b[task]['won']}, {sum(s[1] or 0 for s in b[task]['search'])} children")
    print(json.dumps({"games": len(set(a) & set(b)), "identical": same}))


# ------------------------------------------------------------------ forks
def _same(a, b, fields=("page", "moves", "done", "raw_reward", "utterance", "hidden")) -> str:
    """'' when two answers show the same page, else what differs."""
    for field in fields:
        if getattr(a, field) != getattr(b, field):
            return field
    return ""


def forks(checks: int, tasks: list[str]) -> None:
    from s1gym.tasks.web import env as web

    web.MiniWoBEnv.answer_cache = 0  # every fork's answer comes from a page
    per_task = -(-checks // len(tasks))
    done = diverged = fresh_checks = 0
    start = time.perf_counter()
    bad: dict[str, int] = {}
    for task in tasks:
        env = gym.make("s1/MiniWoB-v0", task=task, max_candidates=1000)
        walk = 0
        walk_over = False
        rng = random.Random(FORK_SEED)
        for _ in range(min(per_task, checks - done)):
            if walk == 0 or walk_over or env.done or not env.candidates or env.steps >= env.max_steps:
                env.reset(seed=FORK_SEED + walk)
                rng = random.Random(FORK_SEED + walk)
                walk += 1
            if not env.candidates:  # a page that offers no move at its start (counted, not checked)
                print(f"NO MOVES {task} seed {env.game_state.game.seed} at step {env.steps}", flush=True)
                walk_over = True
                continue
            move = rng.choice(env.candidates)
            fork = env.fork()
            fork.step_move(move)  # on the walk's page (the fork takes it)
            try:
                env.step_move(move)  # restored on another page by an in-document restart and replay
                problem = _same(fork._answer, env._answer)
            except ValueError as exc:  # the restored page does not offer the move: a divergence; a new walk
                problem = f"restored page: {exc}"
                walk_over = True
            else:
                walk_over = False
            if not problem and done % 10 == 0:
                engine = WebEngine()  # a new browser context: a freshly loaded page
                try:
                    state = env.game_state
                    engine.replay(state.game, state.moves[:-1])
                    fresh = engine.step(state.moves[-1])
                finally:
                    engine.close()
                fresh_checks += 1
                problem = _same(fresh, env._answer) and "fresh page: " + _same(fresh, env._answer)
            fork.close()
            done += 1
            if problem:
                diverged += 1
                bad[task] = bad.get(task, 0) + 1
                print(f"DIVERGED {task} seed {env.game_state.game.seed} moves {list(env.game_state.moves)}: {problem}",
                      flush=True)
            if done % 500 == 0:
                print(f"{done} checks, {diverged} divergences, {time.perf_counter() - start:.0f} s, {load()}", flush=True)
        env.close()
    print(json.dumps({"checks": done, "divergences": diverged, "fresh_page_checks": fresh_checks, "tasks": len(tasks),
                      "seconds": round(time.perf_counter() - start), "divergences_per_task": bad}), flush=True)


def fork_cost(tasks: list[str]) -> None:
    """A fork's first step (a page restored by restart and replay) against a step on the page holding the
    state, along seeded random walks (see the module docstring's --fork-cost)."""
    from s1gym.tasks.web import env as web
    from s1gym.tasks.web.memory import MEMO

    web.MiniWoBEnv.answer_cache = 0  # every answer from a page
    every: list[tuple[int, float]] = []
    for task in tasks:
        env = root = gym.make("s1/MiniWoB-v0", task=task, max_candidates=1000)
        ratios: list[tuple[int, float]] = []
        steps, restored = [], []
        for seed in range(FORK_COST_SEEDS[0], FORK_COST_SEEDS[0] + FORK_COST_SEEDS[1]):
            env.reset(seed=seed)
            rng = random.Random(seed)
            for depth in range(FORK_COST_DEPTH):
                if env.done or not env.candidates:
                    break
                move = rng.choice(env.candidates)
                MEMO.clear()
                pool = env._pool()
                before = pool.restores
                first = env.fork()
                t = time.perf_counter()
                first.step_move(move)  # takes the page holding the state
                step = time.perf_counter() - t
                MEMO.clear()
                between = pool.restores
                second = env.fork()
                t = time.perf_counter()
                second.step_move(move)  # restored on another page
                fork = time.perf_counter() - t
                if (between - before, pool.restores - between) != (0, 1):
                    raise RuntimeError(f"{task}: the step restored {between - before} pages and the fork "
                                       f"{pool.restores - between}, not 0 and 1: the timing pair is not what it says")
                if not second.done and second.candidates:  # that page leaves the walk's next state (untimed),
                    second.step_move(rng.choice(second.candidates))  # so the next state's fork restores it
                second.close()
                env = first  # (closing the walk's first env would close the task's pages: it is the pool's user)
                steps.append(step)
                restored.append(fork)
                ratios.append((depth + 1, fork / step))
        root.close()
        every += ratios
        by_depth = {label: [r for d, r in ratios if lo <= d <= hi]
                    for label, lo, hi in (("1-3", 1, 3), ("4-6", 4, 6), ("7+", 7, 10**9))}
        print(json.dumps({"task": task, "states": len(ratios), "step_ms": round(statistics.median(steps) * 1000, 1),
                          "fork_first_step_ms": round(statistics.median(restored) * 1000, 1),
                          "ratio_median": round(statistics.median(r for _, r in ratios), 2),
                          "ratio_by_depth": {k: round(statistics.median(v), 2) for k, v in by_depth.items() if v},
                          "load": round(os.getloadavg()[0], 1)}), flush=True)
    print(json.dumps({"tasks": len(tasks), "states": len(every),
                      "ratio_median": round(statistics.median(r for _, r in every), 2),
                      "worst_task_depth_ratio": round(max(r for _, r in every), 2)}), flush=True)


def memo_check(per_game: int, tasks: list[str]) -> None:
    """Children answered from MEMO during Search games, stepped again on a fresh page (see the protocol)."""
    from s1gym.policies import Uniform
    from s1gym.tasks.web import env as web
    from s1gym.wrappers import Search

    served: list[tuple] = []
    play = web.MiniWoBEnv._play

    def recording(self, move):
        hits, moves = web.MEMO.hits, self.game_state.moves
        feedback = play(self, move)
        if web.MEMO.hits > hits:
            served.append((self.game_state.game, moves, move, self._answer))
        return feedback

    web.MiniWoBEnv._play = recording
    total = different = 0
    for task in [t for t in tasks if WEB_TASKS[t].memoryless]:
        for seed in range(MEMO_SEEDS[0], MEMO_SEEDS[0] + MEMO_SEEDS[1]):
            served.clear()
            start = time.perf_counter()
            env = gym.make("s1/MiniWoB-v0", task=task)
            env.reset(seed=seed)
            search = Search(Uniform(), budget=SEARCH["budget"], **SEARCH["wrapper_options"])
            search.reset()
            while not env.done and env.candidates and env.steps < env.max_steps:
                decision = search.decide(env.situation())
                if decision.give_up:
                    break
                env.step(decision.action)
            env.close()
            sample = random.Random(MEMO_SEEDS[0]).sample(served, min(per_game, len(served)))
            engine = WebEngine()
            try:
                for game, moves, move, answer in sample:
                    engine.replay(game, moves)
                    problem = _same(engine.step(move), answer, ("page", "moves", "done", "raw_reward", "utterance",
                                                                 "hidden", "error", "memo"))
                    different += bool(problem)
                    if problem:
                        print(f"DIFFERENT {task} seed {seed} moves {list(moves)} + {move!r}: {problem}", flush=True)
            finally:
                engine.close()
            total += len(sample)
            print(f"{task} seed {seed}: {env.steps} moves, won {env.won}, {len(served)} children from MEMO, "
                  f"{len(sample)} stepped again, {time.perf_counter() - start:.0f} s, {load()}", flush=True)
    web.MiniWoBEnv._play = play
    print(json.dumps({"checked": total, "different": different}), flush=True)


# ------------------------------------------------------------------ steps
def steps() -> None:
    """env.step of a click vs a bare Playwright click on the same element of an identical page."""
    rows = {}
    env_times, bare_times = [], []
    for task in CLICK_TASKS:
        env = gym.make("s1/MiniWoB-v0", task=task)
        other = WebEngine()
        mine, bare = [], []
        for seed in range(STEP_SEEDS[0], STEP_SEEDS[0] + STEP_SEEDS[1]):
            env.reset(seed=seed)
            move = next((m for m in env.candidates if m.startswith("click ")), None)
            if move is None:
                continue
            env.engine()  # the env's page holds its state (no restore inside the timing)
            t = time.perf_counter()
            env.step_move(move)
            mine.append(time.perf_counter() - t)
            other.replay(WebGame(task, str(seed)), ())
            path = other._targets[move]["path"]
            selector = other.page.evaluate(
                "(path) => { const el = __s1.locate(path); el.setAttribute('data-bench', '1'); return '[data-bench]'; }", path
            )
            t = time.perf_counter()
            other.page.locator(selector).click(force=True)  # no actionability wait: click-test-2 covers part of its button
            bare.append(time.perf_counter() - t)
        other.close()
        env.close()
        rows[task] = (statistics.median(mine), statistics.median(bare))
        env_times += mine
        bare_times += bare
        print(f"{task:16s} env.step median {rows[task][0] * 1000:6.1f} ms, bare click {rows[task][1] * 1000:6.1f} ms, "
              f"ratio {rows[task][0] / rows[task][1]:.2f} ({load()})", flush=True)
    e, b = statistics.median(env_times), statistics.median(bare_times)
    print(json.dumps({"click_tasks": len(rows), "episodes": len(env_times), "env_step_median_ms": round(e * 1000, 1),
                      "bare_click_median_ms": round(b * 1000, 1), "ratio": round(e / b, 2), "load": os.getloadavg()[0]}))


# ------------------------------------------------------------------ caps
def caps(seeds: int, tasks: list[str]) -> None:
    """Most candidates met per task, playing Random and (where there is one) the rule to the end."""
    import numpy as np

    for task in tasks:
        spec = WEB_TASKS[task]
        env = gym.make("s1/MiniWoB-v0", task=task, max_candidates=1000)
        most, n, start = 0, 0, time.perf_counter()
        for seed in range(seeds):
            for player in ("random", "rule"):
                if player == "rule" and task not in SOLVERS:
                    continue
                env.reset(seed=seed)
                rng = np.random.default_rng(seed)
                most = max(most, len(env.candidates))
                while not env.done and env.candidates and env.steps < env.max_steps:
                    try:
                        move = env.rule_action() if player == "rule" else env.candidates[rng.integers(len(env.candidates))]
                    except LookupError:
                        break
                    env.step_move(move)
                    n += 1
                    most = max(most, len(env.candidates))
        env.close()
        flag = "" if most <= spec.max_candidates else "  <-- over the cap"
        print(f"{task:28s} most {most:3d}  cap {spec.max_candidates:3d}  ({n} steps, "
              f"{(time.perf_counter() - start) / max(n, 1):.3f} s/step){flag}", flush=True)


def workers(episodes: int) -> None:
    out = Path(tempfile.mkdtemp(prefix="s1gym-bench-web-"))
    for k in (1, 2):
        t = time.perf_counter()
        summary = s1gym.evaluate(
            "MiniWoB", "rule", episodes=episodes, seed=0, options={"task": "click-checkboxes"}, out=out,
            job=f"workers-{k}", workers=k,
        )
        wall = time.perf_counter() - t
        n = summary["mean_steps"] * episodes
        print(f"workers={k}: {episodes} click-checkboxes episodes (rule), {n:.0f} steps in {wall:.1f} s "
              f"= {n / wall:.2f} steps/s (cold: includes process and browser start)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", action="store_true")
    parser.add_argument("--search", action="store_true")
    parser.add_argument("--flights", action="store_true")
    parser.add_argument("--forks", type=int, default=0, metavar="N")
    parser.add_argument("--steps", action="store_true")
    parser.add_argument("--caps", action="store_true")
    parser.add_argument("--workers", action="store_true")
    parser.add_argument("--games", type=int, default=None, help="--search: games a task (default: the protocol's)")
    parser.add_argument("--memo-check", type=int, default=0, metavar="N")
    parser.add_argument("--fork-cost", action="store_true")
    parser.add_argument("--ab", action="store_true")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--seeds", type=int, default=10, help="--caps and --workers: seeds 0..S-1")
    parser.add_argument("--tasks", nargs="*", default=list(WEB_TASKS), help="default: every offered task")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "s1gym-bench-web"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = Path(args.out)
    if args.caps:
        caps(args.seeds, args.tasks)
    if args.rules:
        rules(out, args.tasks)
    if args.search:
        search(out, args.tasks, args.games)
    if args.flights:
        flights(out)
    if args.forks:
        forks(args.forks, args.tasks)
    if args.steps:
        steps()
    if args.workers:
        workers(args.seeds)
    if args.memo_check:
        memo_check(args.memo_check, args.tasks)
    if args.ab:
        ab(out, [t for t in args.tasks if t in AB_TASKS] if args.tasks != list(WEB_TASKS) else list(AB_TASKS))
    if args.compare:
        compare(Path(args.compare[0]), Path(args.compare[1]))
    if args.fork_cost:
        fork_cost(args.tasks if args.tasks != list(WEB_TASKS) else list(SLOWEST_TEN))
    if not (args.caps or args.rules or args.search or args.flights or args.forks or args.steps or args.workers
            or args.ab or args.compare or args.memo_check or args.fork_cost):
        parser.print_help()
    print("pools:", pool_stats(), file=sys.stderr)
    browser.shutdown_browsers()


if __name__ == "__main__":
    sys.exit(main())
