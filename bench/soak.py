"""Soak: long jobs across families, the memory and open descriptors of every process sampled (issue 56).

Each family's job is a real ``s1 run`` (a subprocess, as a user runs it) with ``--workers`` processes; a
sampler thread reads ``/proc`` every ``--every`` seconds for the ``s1`` process (the driver) and every process
below it (the workers and their engines: a JVM, Chromium, Xvfb), and after the job checks that none of them
is left. Per process, after the warm-up (the first ``--warmup`` share of the job's samples):

- **RSS growth**: the median of the last 10 % of its samples against the median of the first 10 % after the
  warm-up (goal: at most +10 % in every process, the driver included), and the driver's growth per episode,
  over the samples taken while trials were being written; the samples after the last trial (the driver's
  summary and table, which read every trial back) are reported apart, as their peak;
- **descriptors**: the open file descriptors at the end against just after the warm-up (goal: flat);
- **leftovers**: processes of the job still alive 10 s after ``s1`` exited (goal: none).

    python bench/soak.py                                   # every family, its default episodes, 2 workers
    python bench/soak.py --families twx --episodes 2400    # the issue's CookingWorld soak
    python bench/soak.py --json docs/data/soak.jsonl       # one JSON line per family

Seeds start at 90000 (no family's fitting or tuning used them). The Ray path is measured by
bench/ray_cluster.py; this bench runs the local pool.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

#: family -> the ``s1 run`` arguments of its soak job (cheap offline policies; a shipped model where one is)
JOBS: dict[str, list[str]] = {
    "twx": ["CookingWorld", "--option", "size=medium", "--policy", "local"],
    "alfworld": ["ALFWorld", "--policy", "local"],
    "blackjack": ["Blackjack", "--policy", "rule"],
    "2048": ["2048", "--policy", "local"],
    "web": ["MiniWoB", "--option", "task=click-button", "--policy", "rule"],
    "robot": ["PickPlace", "--policy", "rule"],
}
#: family -> its default episodes: a few minutes of play each on this machine, thousands where episodes are short
EPISODES = {"twx": 2400, "alfworld": 600, "blackjack": 20000, "2048": 300, "web": 600, "robot": 150}
FIRST_SEED = 90000
ENGINES = ("java", "chromium", "chrome", "Xvfb", "headless_shell")


@dataclass
class Series:
    """One process's samples: (seconds since the start, RSS bytes, open descriptors)."""

    pid: int
    kind: str
    samples: list[tuple[float, int, int]] = field(default_factory=list)
    #: the samples taken once every trial was written (the driver's summary and table read them all back)
    end: list[tuple[float, int, int]] = field(default_factory=list)


def _status_rss(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def _children() -> dict[int, list[int]]:
    """Every live process's children (from /proc/<pid>/stat's parent field)."""
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            kids.setdefault(int(fields[1]), []).append(int(entry.name))
    return kids


def _descendants(root: int) -> list[int]:
    kids, out, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


def _kind(pid: int, root: int) -> str:
    if pid == root:
        return "driver"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return "?"
    name = os.path.basename(cmd)
    for engine in ENGINES:
        if name.startswith(engine) or name.endswith(engine):
            return engine.replace("headless_shell", "chromium").replace("chrome", "chromium")
    return "worker" if "python" in name else name or "?"


class Sampler(threading.Thread):
    def __init__(self, root: int, every: float, job: Path, episodes: int) -> None:
        super().__init__(daemon=True)
        self.root, self.every, self.job, self.episodes = root, every, job, episodes
        self.series: dict[int, Series] = {}
        self.stop = threading.Event()
        self.t0 = time.monotonic()

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.monotonic() - self.t0
            played = self.job.is_dir() and sum(1 for e in os.scandir(self.job) if e.is_dir()) >= self.episodes
            for pid in _descendants(self.root):
                rss, fds = _status_rss(pid), _fds(pid)
                if rss is None or fds is None:
                    continue
                if pid not in self.series:
                    self.series[pid] = Series(pid, _kind(pid, self.root))
                series = self.series[pid]
                (series.end if played else series.samples).append((now, rss, fds))
            self.stop.wait(self.every)


def _growth(series: Series, warmup: float) -> dict[str, float] | None:
    """RSS and descriptors after the warm-up; ``None`` for a process with too few samples after it."""
    after = series.samples[int(len(series.samples) * warmup):]
    if len(after) < 10:
        return None
    k = max(1, len(after) // 10)
    first = statistics.median(s[1] for s in after[:k])
    last = statistics.median(s[1] for s in after[-k:])
    return {"rss_first_mb": first / 2**20, "rss_last_mb": last / 2**20, "rss_growth": last / first - 1.0,
            "fds_first": after[0][2], "fds_last": after[-1][2], "samples": len(series.samples),
            "end_peak_mb": max((s[1] for s in series.end), default=0) / 2**20}


def soak(family: str, episodes: int, workers: int, every: float, warmup: float, out: Path) -> dict:
    cmd = [sys.executable, "-m", "s1gym", "run", *JOBS[family], "--episodes", str(episodes), "--seed",
           str(FIRST_SEED), "--workers", str(workers), "--out", str(out), "--job", family, "-q"]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid, every, out / family, episodes)
    sampler.start()
    _, err = proc.communicate()
    sampler.stop.set()
    sampler.join()
    seconds = time.monotonic() - started
    time.sleep(10)  # engines get their time to exit
    left = sorted((s.kind, s.pid) for s in sampler.series.values()
                  if s.pid != proc.pid and _status_rss(s.pid) is not None)
    summary = json.loads((out / family / "summary.json").read_text()) if proc.returncode == 0 else {}
    rows = []
    for s in sorted(sampler.series.values(), key=lambda s: (s.kind != "driver", s.kind, s.pid)):
        g = _growth(s, warmup)
        if g is not None:
            rows.append({"pid": s.pid, "kind": s.kind, **g})
    driver = next((r for r in rows if r["kind"] == "driver"), None)
    after_warmup = episodes * (1 - warmup)
    return {
        "family": family, "job": JOBS[family], "episodes": episodes, "workers": workers, "seconds": seconds,
        "returncode": proc.returncode, "stderr_tail": err[-500:] if proc.returncode else "",
        "scored": summary.get("scored"), "errors": summary.get("errors"),
        "processes": rows,
        "driver_kb_per_episode": (driver["rss_last_mb"] - driver["rss_first_mb"]) * 1024 / after_warmup
        if driver else None,
        "max_rss_growth": max((r["rss_growth"] for r in rows), default=None),
        "fds_flat": all(r["fds_last"] <= r["fds_first"] for r in rows),
        "leftovers": [f"{kind} {pid}" for kind, pid in left],
        "load": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default=",".join(JOBS), help=f"comma-separated, from {','.join(JOBS)}")
    ap.add_argument("--episodes", type=int, help=f"episodes a family (default: {EPISODES})")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=0.25, help="share of the samples left out as warm-up")
    ap.add_argument("--json", help="append one JSON line per family to this file")
    args = ap.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    unknown = sorted(set(families) - set(JOBS))
    if unknown:
        ap.error(f"unknown families {unknown}; choose from {', '.join(JOBS)}")
    with tempfile.TemporaryDirectory(prefix="s1-soak-") as tmp:
        for family in families:
            r = soak(family, args.episodes or EPISODES[family], args.workers, args.every, args.warmup, Path(tmp))
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
            print(f"{family}: {r['episodes']} episodes in {r['seconds']:.0f} s (rc {r['returncode']}, "
                  f"{r['scored']} scored, {r['errors']} errors, load {r['load']:.1f})")
            for p in r["processes"]:
                print(f"  {p['kind']:9s} {p['pid']:>7d}  RSS {p['rss_first_mb']:7.1f} -> {p['rss_last_mb']:7.1f} MB "
                      f"({100 * p['rss_growth']:+5.1f} %)  fds {p['fds_first']} -> {p['fds_last']}"
                      + (f"  after the last trial: peak {p['end_peak_mb']:.1f} MB" if p["end_peak_mb"] else ""))
            if r["driver_kb_per_episode"] is not None:
                print(f"  driver: {r['driver_kb_per_episode']:+.2f} KB an episode after the warm-up")
            print(f"  largest growth {100 * (r['max_rss_growth'] or 0):+.1f} % (goal <= +10 %), descriptors "
                  f"{'flat' if r['fds_flat'] else 'GREW'}, leftovers: {', '.join(r['leftovers']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
