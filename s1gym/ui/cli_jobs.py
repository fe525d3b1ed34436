"""The ``s1`` commands that work on finished jobs: ``rerun`` (play a job again and compare) and ``export``
(its decisions as training data).

s1 rerun jobs/cooking-search --out reruns
s1 export jobs/blackjack-rule jobs/2048-rule --to data/expert
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["COMMANDS", "add_commands", "cmd_export", "cmd_rerun"]


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rerun = sub.add_parser(
        "rerun", help="play a finished job again into a new folder and say per trial whether it came out the same"
    )
    rerun.add_argument("job", help="the job's folder")
    rerun.add_argument("--out", help="jobs folder for the rerun (default: the job's own parent folder)")
    rerun.add_argument("--job", dest="name", help="the rerun's job name (default: <job>-rerun)")
    rerun.add_argument("--workers", "-j", type=int, default=1, help="episodes in K processes (default 1)")
    rerun.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    export = sub.add_parser(
        "export", help="the decisions of jobs as training data: Parquet (one row a decision) and chat JSONL"
    )
    export.add_argument("dirs", nargs="+", metavar="JOB", help="job folders, or folders of jobs")
    export.add_argument("--to", required=True, metavar="DIR", help="folder to write decisions.parquet and chat.jsonl to")
    export.add_argument("--format", choices=("all", "parquet", "chat"), default="all",
                        help="which files to write (default both)")


def cmd_rerun(args: argparse.Namespace) -> int:
    """Exit code 0 when every trial came out identical, 1 when any differs."""
    from s1gym.runner.rerun import rerun

    report = rerun(Path(args.job), out=args.out, name=args.name, workers=args.workers, progress=not args.quiet,
                   report=lambda line: print(f"s1 rerun: {line}", file=sys.stderr, flush=True))
    for line in report.lines():
        print(line)
    return 0 if report.identical else 1


def cmd_export(args: argparse.Namespace) -> int:
    from s1gym.jobs.export import export_jobs

    written = export_jobs(args.dirs, args.to, formats=("parquet", "chat") if args.format == "all" else (args.format,))
    for path, rows in written.items():
        print(f"s1 export: wrote {path} ({rows} decisions)", file=sys.stderr)
    return 0 if any(written.values()) else 1


COMMANDS = {"rerun": cmd_rerun, "export": cmd_export}
