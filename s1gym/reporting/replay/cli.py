"""``s1 replay``: replay pages, GIFs and job index pages from job folders.

s1 replay jobs/2048-local/2048__7 jobs/2048-uniform/2048__7 --out replays        # one page, two trials
s1 replay jobs/2048-local jobs/2048-uniform --seed 7 --out replays --gif         # the same, plus a GIF
s1 replay jobs/2048-local jobs/2048-uniform --out replays                        # index.html + a page per seed
s1 replay --from-frames jobs/a/MiniWoB__0/agent/frames jobs/b/MiniWoB__0/agent/frames --out replays
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from collections.abc import Callable
from typing import Any

from s1gym import jobs
from s1gym.reporting.replay.gif import DEFAULT_MAX_FRAMES, DEFAULT_WIDTH
from s1gym.reporting.replay.page import (
    DEFAULT_FRAME_WIDTH,
    DEFAULT_MAX_TICKS,
    ReplayError,
    load_trial,
    trials_of_job,
    write_page,
)

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths", nargs="*", metavar="TRIAL",
        help="one or two trial folders (<job>/<task>__<seed>), or one or two job folders "
        "(with --seed: that seed's trials; without: index.html and a page per seed)",
    )
    p.add_argument("--out", default="replays", help="folder for the pages and GIFs (default ./replays)")
    p.add_argument("--seed", type=int, help="with job folders: the seed to replay")
    p.add_argument("--mode", choices=("time", "step"), default="time",
                   help="time: each episode on its own clock, latency included (default); step: decision by decision")
    p.add_argument("--speed", type=float,
                   help="time mode: times real time (default: the longer episode plays in 20 s); "
                   "step mode: decisions a second (default 4); --from-frames: frames a second (default 4)")
    p.add_argument("--gif", action="store_true", help="also write a GIF of each page (headless Chromium + Pillow)")
    p.add_argument("--from-frames", nargs="+", metavar="DIR", help="stitch one or two folders of PNGs into a GIF")
    p.add_argument("--max-ticks", type=int, default=DEFAULT_MAX_TICKS,
                   help=f"decisions per trial a page holds, evenly spaced past it (default {DEFAULT_MAX_TICKS})")
    p.add_argument("--max-frames", type=int, default=DEFAULT_MAX_FRAMES,
                   help=f"frames per GIF at most (default {DEFAULT_MAX_FRAMES})")
    p.add_argument("--width", type=int, default=DEFAULT_WIDTH, help=f"GIF width at most, px (default {DEFAULT_WIDTH})")
    p.add_argument("--frame-width", type=int, default=DEFAULT_FRAME_WIDTH,
                   help=f"screenshots in a page at most this wide, px (default {DEFAULT_FRAME_WIDTH})")


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise ReplayError(f"--{name} {value}: give a positive number")
    return value


def _kind(path: Path) -> str:
    if jobs.is_job_dir(path):
        return "job"
    if (path / "result.json").is_file() or (path.is_file() and path.name == "episode.json"):
        return "trial"
    if not path.exists():
        raise ReplayError(f"{path}: no such file or folder")
    raise ReplayError(f"{path}: neither a trial folder (<job>/<task>__<seed> with result.json) nor a job folder")


def _size(path: Path) -> str:
    n = path.stat().st_size
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.speed is not None and not args.speed > 0:
        raise ReplayError(f"--speed {args.speed}: give a positive number (time: × real time; step: decisions a second)")
    gif_options = {"max_frames": _positive("max-frames", args.max_frames), "width": _positive("width", args.width)}
    if args.from_frames:
        from s1gym.reporting.replay.gif import frames_gif

        if args.paths:
            raise ReplayError("--from-frames takes folders of PNGs; pass trials or jobs in a separate call")
        target = out if out.suffix == ".gif" else out / "frames.gif"
        done = frames_gif([Path(f) for f in args.from_frames], target, fps=args.speed or 4.0, **gif_options)
        _report_gif(done)
        return 0
    if not 1 <= len(args.paths) <= 2:
        raise ReplayError("pass one or two trials (or job folders) to replay side by side, or --from-frames DIR [DIR]")
    page_options: dict[str, Any] = {
        "mode": args.mode,
        "speed": args.speed,
        "max_ticks": _positive("max-ticks", args.max_ticks),
        "frame_width": _positive("frame-width", args.frame_width),
    }
    # a trial or job at a URL (s3://bucket/jobs/<job>) is replayed from a local mirror of it
    paths = [jobs.Mirror(p).pull() if jobs.is_remote(p) else Path(p) for p in args.paths]
    kinds = {_kind(p) for p in paths}
    if not args.gif:
        return _pages(args, paths, kinds, out, page_options, None)
    from s1gym.reporting.replay.gif import chromium_page, page_gif

    with chromium_page() as browser:  # one browser for every GIF of this call

        def make_gif(page: Path) -> None:
            _report_gif(page_gif(page, page.with_suffix(".gif"), page=browser, **gif_options))

        return _pages(args, paths, kinds, out, page_options, make_gif)


def _pages(
    args: argparse.Namespace, paths: list[Path], kinds: set[str], out: Path, page_options: dict[str, Any],
    make_gif: Callable[[Path], None] | None,
) -> int:
    if kinds == {"job"} and args.seed is None:
        from s1gym.reporting.replay.index import write_index

        index, pages = write_index(paths, out, gif=make_gif, **page_options)
        print(f"wrote {index} and {len(pages)} replay page(s) in {out}")
        return 0
    if kinds == {"job"}:
        trials = []
        for job in paths:
            found = trials_of_job(job)
            if args.seed not in found:
                raise ReplayError(f"{job} has no finished trial of seed {args.seed}; its seeds: "
                                  f"{', '.join(map(str, sorted(found))) or 'none'}")
            trials.append(load_trial(found[args.seed]))
    elif kinds == {"trial"}:
        if args.seed is not None:
            raise ReplayError("--seed picks a trial of a job folder; these are trial folders already")
        trials = [load_trial(p) for p in paths]
    else:
        raise ReplayError("pass trial folders or job folders, not both")
    page = write_page(trials, out, **page_options)
    print(f"wrote {page} ({_size(page)}; " + ", ".join(
        f"{t.label}: {len(t.episode.get('ticks') or ())} decisions" for t in trials) + ")")
    if make_gif is not None:
        make_gif(page)
    return 0


def _report_gif(done: dict[str, Any]) -> None:
    w, h = done["size"]
    print(f"wrote {done['path']} ({done['frames']} frames, {w}x{h} px, {_size(done['path'])})", file=sys.stdout)
