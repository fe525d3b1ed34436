"""The ``s1`` command line: run, table, list, play, serve, replay, rerun, export.

Exit codes, the same for every command: 0 done; 1 ran but failed (every trial errored, no job to show);
2 a usage error -- what was typed cannot run -- reported as argparse reports its own, one line
``s1 <command>: error: <what is wrong and how to fix it>`` (argparse adds its usage line for the errors it
finds while parsing); 130 interrupted.

s1 run CookingWorld --policy local --wrap search --budget 200 --episodes 5 --option size=small
s1 table jobs/
s1 list
s1 play Blackjack --seed 3
s1 serve --port 8000
s1 replay jobs/2048-local jobs/2048-uniform --seed 7 --gif
s1 rerun jobs/2048-local; s1 export jobs/2048-rule --to data/2048 (s1gym.ui.cli_jobs)
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from s1gym.checks import non_negative_int
from s1gym.errors import RunError
from s1gym.jobs.folder import JobWriteError
from s1gym.reporting.table import print_rows, table_rows
from s1gym.ui import cli_jobs

__all__ = ["main", "parse_key_values", "table_rows"]


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """``3`` -> 3, ``0.5`` -> 0.5, ``true`` -> True, ``null`` -> None, ``[1,2]`` -> list, else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        low = text.lower()
        if low in {"true", "yes", "on"}:
            return True
        if low in {"false", "no", "off"}:
            return False
        if low in {"none", "null"}:
            return None
        return text


def _key_value(item: str) -> tuple[str, Any]:
    """One ``KEY=VALUE`` argument (an argparse ``type``: a bad one is a usage error naming the flag)."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{item!r}: expected KEY=VALUE, e.g. size=small")
    return key.strip().replace("-", "_"), parse_value(value.strip())


def parse_key_values(items: Sequence[str] | None, flag: str) -> dict[str, Any]:
    """``["size=small", "fold=test"]`` -> ``{"size": "small", "fold": "test"}``; a ``ValueError`` naming
    ``flag`` for an item without ``=``."""
    out: dict[str, Any] = {}
    for item in items or ():
        try:
            key, value = _key_value(item)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"{flag} {exc}") from None
        out[key] = value
    return out


def _wrappers(text: str) -> list[str]:
    """``--wrap search,lookahead`` -> the names, outermost first (an argparse ``type``)."""
    from s1gym.wrappers import WRAPPERS

    try:
        return WRAPPERS.keys_of(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (comma-separated, outermost first)") from None


def _seed(text: str) -> int:
    """A seed: a whole number >= 0 (an argparse ``type``)."""
    try:
        return non_negative_int("seed", int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is a whole number >= 0") from None


def _policy(text: str) -> str:
    """``--policy``: a registered name (lower-cased) or ``module:factory`` (an argparse ``type``)."""
    from s1gym.policies import POLICIES

    if ":" in text:
        return text  # module:factory (no registered name has a colon)
    try:
        return POLICIES.key(text, otherwise="give module:factory")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s1", description="s1gym: text decision tasks for System One models."
    )
    from s1gym._version import __version__

    parser.add_argument("--version", action="version", version=f"s1gym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,table,list,play,serve,replay,rerun,export}")

    run = sub.add_parser("run", help="play seeds S..S+N-1 with a policy and write a job folder")
    run.add_argument("task", help="task name or id, short (any case) or full (see `s1 list`)")
    run.add_argument(
        "--policy", "-p", required=True, type=_policy, help="jev, chat, local, uniform, random, rule or module:factory"
    )
    run.add_argument(
        "--wrap", "-w", type=_wrappers, default=[],
        help="wrappers, outermost first: e.g. search,lookahead (also rethink)",
    )
    run.add_argument("--budget", type=int, help="wrapper budget (Search: inner-policy calls per decision)")
    run.add_argument("--episodes", "-n", type=int, default=10, help="episodes to play (default 10)")
    run.add_argument("--seed", "-s", type=int, default=0, help="first seed (default 0)")
    run.add_argument(
        "--option", "-o", action="append", type=_key_value, metavar="KEY=VALUE", help="task option (repeatable)"
    )
    run.add_argument(
        "--policy-option", action="append", type=_key_value, metavar="KEY=VALUE", help="policy option (repeatable)"
    )
    run.add_argument(
        "--wrap-option",
        action="append",
        type=_key_value,
        metavar="KEY=VALUE",
        help="wrapper option, e.g. priority=phs_h or epsilon=0.1 (repeatable)",
    )
    par = run.add_mutually_exclusive_group()
    par.add_argument("--workers", "-j", type=int, default=1, help="episodes in K processes (default 1)")
    par.add_argument(
        "--ray",
        nargs="?",
        const=True,
        default=None,
        metavar="ADDRESS",
        help="run episodes as Ray tasks; without ADDRESS starts a local Ray",
    )
    run.add_argument(
        "--ray-workers", type=int, default=None, help="concurrent Ray actors (default: cluster CPUs)"
    )
    run.add_argument("--out", default="jobs", help="jobs folder (default ./jobs), or an fsspec URL such as "
                     "s3://bucket/jobs (the remote extra; docs/cluster.md)")
    run.add_argument("--job", help="job name (default: the start time)")
    run.add_argument(
        "--resume", action="store_true", help="continue a job: skip finished trials, rerun the rest"
    )
    run.add_argument("--retry-errors", action="store_true", help="with --resume: also replay errored trials")
    run.add_argument(
        "--retries", type=int, default=1, metavar="N",
        help="play an episode whose engine or worker died again from its seed on a fresh one, up to N times "
        "(default 1)",
    )
    run.add_argument(
        "--policy-retries", type=int, default=0, metavar="N",
        help="play an episode whose policy failed (API down, bad key) again, up to N times (default 0)",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    run.add_argument(
        "--plot", metavar="OUT.png", help="after the job, draw its solve-rate curve and scores to OUT.png"
    )
    run.add_argument(
        "--frames", action="store_true",
        help="store the env's screenshot per tick for `s1 replay` (tasks with env.screenshot(): web, desktop)",
    )

    run.add_argument(
        "--agreement", choices=("on", "off"), default="on",
        help="ask the task's expert after every decision for the agreement columns (default on; off: '–')",
    )

    table = sub.add_parser(
        "table", help="one row per setup (task and options, policy and options, wrappers and options) over DIR"
    )
    table.add_argument("dirs", nargs="+", metavar="DIR")
    table.add_argument("--format", choices=("rich", "markdown", "csv", "json"), default="rich")
    table.add_argument(
        "--plot", metavar="OUT.png",
        help="also draw solve rate against the call budget and the scores per row, a figure per task "
        "(several tasks: OUT-<task>.png)",
    )

    sub.add_parser("list", help="the registered tasks and their options")

    play = sub.add_parser("play", help="play a task yourself in the terminal")
    play.add_argument("task")
    play.add_argument("--seed", "-s", type=_seed, default=0)
    play.add_argument("--option", "-o", action="append", type=_key_value, metavar="KEY=VALUE", help="task option")

    serve = sub.add_parser("serve", help="a local System One server (the TypeSafe wire format)")
    if "serve" in argv:  # import the server only when it is asked for
        from s1gym.ui import serve as server

        server.add_arguments(serve)
    replay = sub.add_parser("replay", help="an HTML page (and GIF) playing one or two trials side by side")
    if "replay" in argv:
        from s1gym.reporting.replay import cli as replay_cli

        replay_cli.add_arguments(replay)
    cli_jobs.add_commands(sub)
    parser.commands = sub.choices  # type: ignore[attr-defined]  # name -> its parser, for its errors
    return parser


# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    from s1gym.runner.spec import evaluate

    if args.plot:
        _plot_check(args.plot)  # a bad file name or no matplotlib fails before the job, not after
    workers = args.workers
    if args.ray is not None and args.ray_workers:
        workers = args.ray_workers
    summary = evaluate(
        args.task,
        args.policy,
        episodes=args.episodes,
        seed=args.seed,
        wrappers=args.wrap,
        budget=args.budget,
        options=dict(args.option or ()),
        policy_options=dict(args.policy_option or ()),
        wrapper_options=dict(args.wrap_option or ()),
        out=args.out,
        job=args.job,
        resume=args.resume,
        retry_errors=args.retry_errors,
        workers=workers,
        ray=args.ray,
        progress=not args.quiet,
        frames=args.frames,
        agreement=args.agreement == "on",
        retries=args.retries,
        policy_retries=args.policy_retries,
        report=lambda line: print(f"s1 run: {line}", file=sys.stderr, flush=True),
    )
    rows = table_rows([summary["job_dir"]])
    print_rows(rows, "rich", title=f"job {summary['job_dir']}")
    if summary.get("task_metrics"):
        _print_metrics(summary["task_metrics"])
    if args.plot:
        _plot([summary["job_dir"]], args.plot)
    n_failed = sum(len(trials) for trials in (summary.get("errors_by_message") or {}).values())
    if n_failed:
        log = Path(summary["job_dir"]) / "job.log"
        print(f"s1 run: {n_failed} trial(s) failed; tracebacks in each trial's result.json (exception_info)"
              + (f" and {log}" if log.exists() else ""), file=sys.stderr)
    if summary["scored"] == 0:
        print(
            f"s1 run: no trial finished with a score ({summary['errors']} errored); "
            f"details in {summary['job_dir']}/<trial>/result.json (exception_info)",
            file=sys.stderr,
        )
        return 1
    return 0


def _print_metrics(metrics: Mapping[str, Any]) -> None:
    from rich.pretty import Pretty

    from s1gym.reporting.table import console

    console().print("task metrics:", Pretty(metrics))


def cmd_table(args: argparse.Namespace) -> int:
    rows = table_rows(args.dirs)
    if not rows:
        print(
            f"s1 table: no job folders under {', '.join(args.dirs)} (run `s1 run ...` first)", file=sys.stderr
        )
        return 1
    if args.plot:
        _plot_check(args.plot)
    print_rows(rows, args.format)
    if args.plot:
        _plot(args.dirs, args.plot)
    return 0


def _plot_check(out: str) -> None:
    from s1gym.reporting import plots

    try:
        plots.check_out_path(out)
    except ModuleNotFoundError as exc:
        raise RunError(f"--plot: {exc}") from None


def _plot(dirs: Sequence[str], out: str) -> None:
    from s1gym.reporting.plots import plot_jobs

    for figure in plot_jobs(dirs, out):  # paths on stderr: stdout stays the table (json, csv)
        print(f"s1: wrote {figure.path} ({figure.env_id}, {len(figure.arms)} arms)", file=sys.stderr)


def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from s1gym.registration import env_class, family_of, task_ids

    table = Table(title="s1gym tasks (gym.make(id, **options))")
    families: list[type] = []
    for col in ("family", "id", "N", "steps", "options"):
        table.add_column(col)
    for env_id in task_ids():
        family = family_of(env_id)
        name = family.name if family is not None else "?"
        try:
            cls = env_class(env_id)
        except Exception as exc:  # a task whose optional engine is missing still shows up  # noqa: BLE001
            table.add_row(name, env_id, "", "", f"[dim]unavailable: {type(exc).__name__}: {exc}[/dim]")
            continue
        opts = "\n".join(f"{k}: {v}" for k, v in cls.option_help.items()) or "-"
        table.add_row(name, env_id, str(cls.default_max_candidates), str(cls.default_max_steps), opts)
        if "list_tasks" in cls.__dict__:  # a family of tasks behind one id lists them (the MiniWoB++ pages)
            families.append(cls)
    from s1gym.reporting.table import console

    console().print(table)
    for cls in families:
        title, columns, rows = cls.list_tasks()
        sub = Table(title=title)
        for col in columns:
            sub.add_column(col)
        for row in rows:
            sub.add_row(*row)
        console().print(sub)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from s1gym.ui.play import play

    play(args.task, seed=args.seed, options=dict(args.option or ()))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from s1gym.ui import serve as server

    return int(server.run(args) or 0)


def cmd_replay(args: argparse.Namespace) -> int:
    from s1gym.reporting.replay import cli as replay_cli

    return replay_cli.run(args)


def usage_error(command: str, error: object) -> int:
    """Report a usage error the way argparse does (``s1 <command>: error: ...``, one line); exit code 2."""
    print(f"s1 {command}: error: {error}", file=sys.stderr)
    return 2


COMMANDS = {"run": cmd_run, "table": cmd_table, "list": cmd_list, "play": cmd_play, "serve": cmd_serve,
            "replay": cmd_replay, **cli_jobs.COMMANDS}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[:1])
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would report them as the top parser's ("s1: error"); they belong to the command
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        with warnings.catch_warnings():  # a warning is one line for the user, not a source location
            warnings.showwarning = lambda message, *_, **__: print(f"s1 {args.command}: warning: {message}",
                                                                   file=sys.stderr)
            return COMMANDS[args.command](args)
    except JobWriteError as exc:  # before ValueError/OSError: a running job's disk failed, not a usage error
        print(f"s1 {args.command}: {exc}", file=sys.stderr)
        return 1
    except (RunError, FileNotFoundError, NotADirectoryError, ValueError) as exc:
        return usage_error(args.command, exc)
    except KeyboardInterrupt:
        print(
            f"s1 {args.command}: interrupted (finished trials are saved; rerun with --resume)",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
