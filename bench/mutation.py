"""Mutation testing of the intervals and the contract (issue 57): mutmut over s1gym/stats.py, s1gym/core/,
wrappers/ and s1gym/jobs/, each with its own fast tests, scored per area.

mutmut 3 copies the package into ``./mutants`` and puts that folder first on ``sys.path``, so it has to find
every module under one folder: wrappers/ and policies/ are imported as ``s1gym.wrappers`` and
``s1gym.policies`` through setup.py's package-dir mapping, which a path search does not know. So the bench
builds, per area, a copy of the tree under ``--workdir`` (default /tmp/s1/mut) in which wrappers/ and policies/
sit inside s1gym/ (``s1gym/wrappers``, ``s1gym/policies``: the import names, the same modules), with a
pyproject.toml that is the repo's plus a ``[tool.mutmut]`` section naming the area's files and tests. The repo
itself is only read. Each mutant runs only the selected tests that reach the mutated function (mutmut's own
test-to-function map), never the whole suite.

    nice -n 10 .venv/bin/python bench/mutation.py                 # all four areas (hours here: jobs/ alone
                                                                  # is ~3,000 mutants)
    nice -n 10 .venv/bin/python bench/mutation.py --areas stats core
    nice -n 10 .venv/bin/python bench/mutation.py --areas jobs --only s1gym/jobs/summary.py
    nice -n 10 .venv/bin/python bench/mutation.py --areas core --recheck   # survivors again, tests added since
    .venv/bin/python bench/mutation.py --report-only              # the last run's table and survivors again

``--recheck`` refuses when the area's sources changed since the run (its mutants would be others). To recheck a
run whose sources have moved on in the checkout, run the bench from a copy of the commit it ran on, with the
tests and bench of now (nothing in the repo changes):

    git archive COMMIT | tar -x -C /tmp/src && cp tests/test_mutants_*.py /tmp/src/tests/ && cp bench/mutation.py /tmp/src/bench/
    cd /tmp/src && nice -n 10 /work/main/.venv/bin/python bench/mutation.py --areas jobs --workdir W --recheck --only ...

On 2026-12-05 here (2 cores, loaded): stats 0.3 min, core ~1 min, wrappers 35 min (1,694 mutants), jobs'
summary/harbor/files 28 min (1,169), the rest of jobs/ 20 min (2,062; rechecks 9.7, 3.5 and 1.8 min);
docs/benchmarks.md "Mutation testing (issue 57)" has the scores.

Needs mutmut (``pip install mutmut==3.8.1``, the ``bench`` extra). The score counts killed and timed-out
mutants as caught; mutants listed in ``EQUIVALENT`` (each with the reason it cannot change behaviour) are left
out of the denominator; every other survivor is printed with its diff.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: area: (files to mutate, as paths in the copy; test files that exercise them)
AREAS: dict[str, tuple[list[str], list[str]]] = {
    "stats": (["s1gym/stats.py"], ["tests/test_stats.py"]),
    "core": (
        ["s1gym/core/*"],
        ["tests/test_core.py", "tests/test_lru.py", "tests/test_estimates.py", "tests/test_mutants_core.py"],
    ),
    "wrappers": (
        ["s1gym/wrappers/*"],
        ["tests/test_wrappers.py", "tests/test_lookahead_rethink.py", "tests/test_search.py",
         "tests/test_mutants_wrappers.py"],
    ),
    # the job files' own tests play whole jobs (CookingWorld, ALFWorld, worker processes: 5 min a pass on this
    # machine under load), too slow to run for each of ~3,000 mutants; these are the fast ones
    "jobs": (
        ["s1gym/jobs/*"],
        ["tests/test_mutants_jobs.py", "tests/test_rerun.py::test_blackjack_rule_reruns_bit_for_bit",
         "tests/test_rerun.py::test_a_changed_pin_is_named_before_the_rerun_and_a_changed_decision_after",
         "tests/test_episode_files.py::test_frames_are_recorded_per_tick_without_policy_calls",
         # added for compare/episodes/export/pins/provenance (a few seconds in all; test_remote_jobs.py runs a
         # SeaweedFS server, so remote.py is tested on memory:// in test_mutants_jobs instead)
         "tests/test_rerun.py::test_a_job_pins_versions_files_and_the_model_it_reads",
         "tests/test_rerun.py::test_a_chat_policy_pins_its_model_and_sampling_but_never_its_key",
         "tests/test_episode_files.py::test_compaction_is_lossless",
         "tests/test_episode_files.py::test_format_1_files_still_read",
         "tests/test_episode_files.py::test_unknown_format_and_missing_file_say_what_to_do",
         "tests/test_export.py", "tests/test_provenance.py"],
    ),
}

#: Mutants that cannot change behaviour, by mutmut's name, with the reason; left out of the denominator. A name
#: is the function and the mutation's index in it, so an edit of the function renumbers its mutants: judge the
#: survivors the report prints (with their diffs) again after such an edit.
EQUIVALENT: dict[str, str] = {
    "s1gym.stats.x_bootstrap_interval__mutmut_15":
        "np.empty(n, dtype=None): numpy's default dtype is float64, the one written out",
    "s1gym.stats.x_bootstrap_interval__mutmut_17":
        "np.empty(n) without dtype: numpy's default dtype is float64, the one written out",
    "s1gym.stats.x_bootstrap_interval__mutmut_51":
        "rng.integers(len(x), size=...) for rng.integers(0, len(x), size=...): numpy reads integers(n) as "
        "integers(0, n), the same call on the same stream",
    "s1gym.stats.x_bootstrap_interval__mutmut_23":
        "chunk = max(2, ...) for max(1, ...): only the chunking changes, and NumPy draws the same index stream "
        "whatever the chunks (checked: one draw of (6, n) equals six of (1, n))",
    "s1gym.stats.x_bootstrap_interval__mutmut_33":
        "_CELLS // max(2, len(x)): differs only for fewer than two observations, where both give chunks of "
        "1,000; and the chunking never changes the stream",
    "s1gym.stats.x_bootstrap_ci__mutmut_21":
        "np.all(x == x[1]) for np.all(x == x[0]): reached only with two or more values, where all equal "
        "x[1] exactly when all equal x[0]",
    # core/
    "s1gym.core.decision.xǁDecisionǁfrom_probabilities__mutmut_4":
        "np.asarray(p, dtype=None): Decision.__post_init__ casts the probabilities to float64 anyway, and "
        "argmax reads ints as it reads floats",
    "s1gym.core.decision.xǁDecisionǁfrom_probabilities__mutmut_6": "as from_probabilities__mutmut_4 (dtype left out)",
    "s1gym.core.env.xǁS1Envǁ__init____mutmut_77":
        "_started = None for False: the flag is only ever read as a truth value",
    "s1gym.core.env.xǁS1Envǁ_refresh__mutmut_15":
        "`or` for `and` in the slot rewording test: an equal tuple of slots is set again, to the same values",
    "s1gym.core.forks.xǁForksǁfork_step__mutmut_1":
        "keep=True as the default of the base fork_step, whose body never reads keep (engines override it "
        "with their own default)",
    "s1gym.core.helpers.x_copy_generator__mutmut_2":
        "the new bit generator's seed (None: OS entropy) is overwritten by the copied state",
    "s1gym.core.helpers.x_copy_generator__mutmut_4": "as x_copy_generator__mutmut_2 (seed 1)",
    "s1gym.core.lru.xǁLRUǁ_settle__mutmut_3":
        "OrderedDict.popitem(last=None): None is false, the oldest entry leaves as with last=False",
    "s1gym.core.position.x_split_moves__mutmut_7":
        "`head if sep or True`: without a separator str.rpartition gives head == '', the value of the else",
    # wrappers/
    "s1gym.wrappers.compose.x_wrap__mutmut_22":
        "every taker for every option: no option but the shared allow_oracle is taken by two wrappers",
    "s1gym.wrappers.compose.x_wrap__mutmut_24": "takers[:2] for takers[:1]: as x_wrap__mutmut_22",
    "s1gym.wrappers.rethink.xǁRethinkǁ_clear__mutmut_1":
        "_last_score = '' for None: the first decision then takes the score-change branch, which sets the "
        "counters to the values _clear just gave them",
    "s1gym.wrappers.rethink.xǁRethinkǁdecide__mutmut_12":
        "the run length reset to 1 with the run's move None: the next move never equals None, so its run "
        "starts at 1 either way",
    "s1gym.wrappers.rethink.xǁRethinkǁ_apply_blocks__mutmut_31":
        "zip(texts, mask) without strict=True: mask is built from texts, same length",
    "s1gym.wrappers.rethink.xǁRethinkǁ_apply_blocks__mutmut_34": "as _apply_blocks__mutmut_31",
    "s1gym.wrappers.rethink.xǁRethinkǁ_apply_blocks__mutmut_35": "as _apply_blocks__mutmut_31",
    "s1gym.wrappers.lookahead.xǁLookaheadǁdecide_many__mutmut_17":
        "zip(situations, prepared, inner) without strict=True: prepared is built from situations and "
        "inner_many raises unless it has one decision a situation",
    "s1gym.wrappers.lookahead.xǁLookaheadǁdecide_many__mutmut_21": "as decide_many__mutmut_17",
    "s1gym.wrappers.lookahead.xǁLookaheadǁdecide_many__mutmut_22": "as decide_many__mutmut_17",
    "s1gym.wrappers._search_nodes.x_log_priority__mutmut_2":
        "log_pi == +inf for == -inf: log_pi is a log of a probability (never +inf), and with log_pi = -inf every "
        "priority formula gives +inf anyway (h >= 0, g >= 1)",
    "s1gym.wrappers._search_run.xǁSearchRunǁ_materialise__mutmut_1":
        "a weaker assert of an invariant the search keeps (a frontier node has a parent with a live env)",
    "s1gym.wrappers._search_run.xǁSearchRunǁ_materialise__mutmut_2": "as _materialise__mutmut_1",
    "s1gym.wrappers._search_run.xǁSearchRunǁ_on_survivors__mutmut_5":
        "np.asarray(p, dtype=None): Decision already holds its probabilities as float64",
    "s1gym.wrappers._search_run.xǁSearchRunǁ_on_survivors__mutmut_7": "as _on_survivors__mutmut_5",
    # SearchRun.answer as b4fe4c9 left it (its mutants renumbered: these were 28, 31, 32 before)
    "s1gym.wrappers._search_run.xǁSearchRunǁanswer__mutmut_21":
        "zip(keys, found, strict=None): found is built from keys, one each, the same length",
    "s1gym.wrappers._search_run.xǁSearchRunǁanswer__mutmut_24": "zip without strict: as answer__mutmut_21",
    "s1gym.wrappers._search_run.xǁSearchRunǁanswer__mutmut_25": "strict=False: as answer__mutmut_21",
    # jobs/
    "s1gym.jobs.files.x_remove_stale_temp_files__mutmut_6":
        "unlink(missing_ok=None) for True: differs only if another process deletes the file between the "
        "listing and the unlink",
    "s1gym.jobs.files.x_remove_stale_temp_files__mutmut_7": "missing_ok=False: as x_remove_stale_temp_files__mutmut_6",
    **{f"s1gym.jobs.harbor.x_trial_files__mutmut_{n}":
       "episode.get(flag, None) (or no default) for get(flag, False): bool(None) is bool(False)"
       for n in (79, 81, 89, 91, 99, 101, 109, 111)},
    "s1gym.jobs.files.x_atomic_write_json__mutmut_17": "encode('UTF-8') for encode('utf-8'): one codec",
    "s1gym.jobs.files.x_read_json__mutmut_6": "encoding='UTF-8' for 'utf-8': one codec",
    "s1gym.jobs.summary.x_distinct_games__mutmut_14":
        "the tag of a seed's own game key ('XXseedXX' for 'seed'): a key no game read from JSON can equal either way",
    "s1gym.jobs.summary.x_distinct_games__mutmut_15": "'SEED' for 'seed': as x_distinct_games__mutmut_14",
    "s1gym.jobs.files.x__dumps__mutmut_11":
        "json.dumps(..., ensure_ascii=None): json reads the flag as a truth value, None is False",
    "s1gym.jobs.files.x__scrub_text__mutmut_2": "ensure_ascii=None: as x__dumps__mutmut_11",
    # jobs/files.py and folder.py after cec5509 (the driver's temp files, secret cache and KeptTrial)
    **{f"s1gym.jobs.files.x__secret_values__mutmut_{n}":
       "the environment's secret list recomputed on every call (the cache switched off): the same list, only slower"
       for n in (1, 2, 6, 7, 8, 10, 24, 25, 26, 28)},
    **{f"s1gym.jobs.files.x__create_temp__mutmut_{n}":
       "O_CLOEXEC or O_BINARY (0 on Linux) dropped or combined otherwise: no process is spawned while a job "
       "file is open, and O_BINARY does not exist here"
       for n in (2, 3, 6, 8, 11, 12, 13, 14, 15, 21, 22, 23)},
    **{f"s1gym.jobs.files.x__create_temp__mutmut_{n}":
       "mkdir(exist_ok=...) of a parent just found missing: differs only if another process makes it in between"
       for n in (42, 44, 46)},
    **{f"s1gym.jobs.files.x_atomic_write_bytes__mutmut_{n}":
       "unlink(missing_ok=...) of the temp file on a failed write: the temp file exists there (made by os.open)"
       for n in (18, 20)},
    **{f"s1gym.jobs.folder.xǁKeptTrialǁas_result__mutmut_{n}":
       "zip(..., strict=...) over the three error fields and a tuple of three made by KeptTrial.of"
       for n in (26, 29, 36)},
    "s1gym.jobs.folder.xǁJobFolderǁ__init____mutmut_12":
        "_last_write = 1.0 for 0.0: the first result.json waits only if the machine booted under a second ago",
    "s1gym.jobs.folder.xǁJobFolderǁwrite_result__mutmut_5":
        "<= for < against every_s: differs only when the elapsed time equals every_s to the nanosecond",
    # jobs/: compare, episodes, export, folder, pins, provenance, remote (the sources of b4fe4c9)
    "s1gym.jobs.export.x__short__mutmut_13":
        "env_id.rsplit('/') without maxsplit=1: the last piece, the only one read, is the same",
    "s1gym.jobs.export.x__short__mutmut_16": "rsplit('/', 2): as x__short__mutmut_13",
    "s1gym.jobs.export.x_export_jobs__mutmut_69": "encoding='UTF-8' for 'utf-8': one codec",
    "s1gym.jobs.export.x_export_jobs__mutmut_73":
        "json.dumps(..., ensure_ascii=None) for False: json reads the flag as a truth value",
    "s1gym.jobs.folder.x_check_job_name__mutmut_3":
        "'XX/XX' for '/' among the separators: '/' is os.sep or os.altsep on every platform, in the set anyway",
    "s1gym.jobs.folder.xǁJobFolderǁfinish__mutmut_12":
        "load_trials without summary_digest: the digest keeps every field summarize_trials reads (it only "
        "saves memory)",
    "s1gym.jobs.folder.xǁJobFolderǁfinish__mutmut_14": "as finish__mutmut_12 (digest left out)",
    "s1gym.jobs.pins.x_sha256_file__mutmut_13":
        "f.read(None) reads the whole file in one block: the same bytes hashed",
    "s1gym.jobs.pins.x_sha256_file__mutmut_15": "blocks of 2 MiB for 1 MiB: the same bytes hashed",
    "s1gym.jobs.pins.x_sha256_file__mutmut_16": "blocks of 1 << 21 for 1 << 20: as x_sha256_file__mutmut_15",
    "s1gym.jobs.pins.x__requirement_name__mutmut_18":
        "re.split without maxsplit=1: only the first piece is read, the same",
    "s1gym.jobs.pins.x__requirement_name__mutmut_21": "maxsplit=2: as x__requirement_name__mutmut_18",
    "s1gym.jobs.pins.x__model_files__mutmut_26":
        "the policy's default str(None) for '?': the name is only compared with 'local'",
    "s1gym.jobs.pins.x__model_files__mutmut_28": "as x__model_files__mutmut_26 (no default: 'None')",
    "s1gym.jobs.pins.x__model_files__mutmut_31": "'XX?XX' for '?': as x__model_files__mutmut_26",
    "s1gym.jobs.provenance.x_config_notices__mutmut_43":
        "the policy's default str(None) for '?': fitted_on_played only compares the name with 'local'",
    "s1gym.jobs.provenance.x_config_notices__mutmut_45": "as x_config_notices__mutmut_43 (no default)",
    "s1gym.jobs.provenance.x_config_notices__mutmut_48": "'XX?XX' for '?': as x_config_notices__mutmut_43",
}

#: Tests of the repo's layout, not of behaviour, that cannot pass in the flattened copy (a wheel of it)
DESELECT = ["tests/test_core.py::test_wheel_ships_policies_and_wrappers_as_subpackages"]
#: ``--before``: leave the tests written for mutation testing (tests/test_mutants_*.py) out of the selection
BEFORE = False
ALSO_COPY = ["bench", "docs", "examples", "scripts", "README.md"]
CAUGHT = {"killed", "timeout", "caught by type check", "segfault"}
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "mutants")


def build(area: str, workdir: Path) -> Path:
    """A fresh copy of the tree for one area, wrappers/ and policies/ moved under s1gym/."""
    files, tests = AREAS[area]
    dest = workdir / area
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(ROOT / "s1gym", dest / "s1gym", ignore=IGNORE)
    shutil.copytree(ROOT / "wrappers", dest / "s1gym" / "wrappers", ignore=IGNORE)
    shutil.copytree(ROOT / "policies", dest / "s1gym" / "policies", ignore=IGNORE)
    shutil.copytree(ROOT / "tests", dest / "tests", ignore=IGNORE)
    # what tests read beside the package (a bench script, a doc, an example), copied into mutants/ as well
    for extra in ALSO_COPY:
        if (ROOT / extra).is_dir():
            shutil.copytree(ROOT / extra, dest / extra, ignore=IGNORE)
        elif (ROOT / extra).exists():
            shutil.copy2(ROOT / extra, dest / extra)
    # tests that read ../shared/data (the repo's sibling) find it beside the copy's mutants/ folder too
    shared = ROOT.parent / "shared"
    if shared.exists():
        for link in (dest / "shared", dest.parent / "shared"):
            if not link.exists():
                link.symlink_to(shared)
    tests = [t for t in tests if (dest / t.split("::")[0]).exists()
             and not (BEFORE and Path(t).name.startswith("test_mutants_"))]
    section = "\n".join([
        "",
        "[tool.mutmut]",
        'source_paths = ["s1gym"]',
        f"also_copy = {json.dumps(ALSO_COPY)}",
        f"only_mutate = {json.dumps(files)}",
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        "pytest_add_cli_args = " + json.dumps(["-p", "no:cacheprovider", "-o", "addopts=", "--timeout=120",
                                               *(f"--deselect={t}" for t in DESELECT)]),
        "use_git_change_detection = false",
        # a mutant that loops is stopped after 2 * 5 * (its tests' clean time + 1 s) of CPU (mutmut's default
        # multiplier, 15, spends minutes per such mutant on a loaded 2-core machine)
        "timeout_multiplier = 5.0",
        "",
    ])
    (dest / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + section)
    return dest


def mutmut_bin() -> str:
    exe = Path(sys.executable).with_name("mutmut")
    if not exe.exists():
        raise SystemExit(f"mutmut is not installed in {sys.prefix}: pip install mutmut==3.8.1 (the bench extra)")
    return str(exe)


def run(area: str, workdir: Path, max_children: int, names: list[str] | None = None) -> float:
    """mutmut over the area in a fresh copy; only ``names`` (mutmut's mutant names) when given."""
    dest = build(area, workdir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    log = workdir / f"{area}.log"
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.run([mutmut_bin(), "run", "--max-children", str(max_children), *(names or [])],
                              cwd=dest, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    took = time.monotonic() - start
    if proc.returncode != 0:
        print(f"{area}: mutmut exited {proc.returncode}; see {log}", file=sys.stderr)
    return took


def recheck(area: str, workdir: Path, max_children: int) -> float:
    """Run again only the mutants the last full run did not catch, with the tests as they are now, and merge:
    tests were only added since, so a mutant caught then is caught now (the sources must be unchanged:
    a copy of each mutated file's hash is kept with the results and compared)."""
    saved = workdir / f"{area}.results.json"
    if not saved.exists():
        raise SystemExit(f"{area}: no full run to recheck in {workdir} ({saved.name} is missing); "
                         "run without --recheck")
    before = json.loads(saved.read_text())
    if before["sources"] != sources_hash(area):
        raise SystemExit(f"{area}: the sources changed since the full run in {workdir}; run without --recheck")
    names = sorted(k for k, v in before["status"].items() if v not in CAUGHT)
    took = run(area, workdir, max_children, names) if names else 0.0
    now = results(area, workdir)
    merged = dict(before["status"])
    for name in names:  # a mutant the recheck did not get to (mutmut failed, or was stopped) keeps its status
        if now.get(name, "not checked") != "not checked":
            merged[name] = now[name]
    saved.write_text(json.dumps({"sources": before["sources"], "status": merged,
                                 "first": before.get("first", before["status"])}, indent=0))
    return took


def sources_hash(area: str, copy: Path | None = None) -> str:
    """A hash of the area's source files: in the repo, or (``copy``) in the copy a run mutated."""
    import hashlib

    h = hashlib.sha256()
    for pattern in AREAS[area][0]:
        found = sorted((copy or ROOT).glob(pattern if copy else pattern.replace("s1gym/wrappers", "wrappers")))
        for path in found:
            if path.suffix == ".py":
                h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()


def save(area: str, workdir: Path) -> None:
    status = results(area, workdir)
    (workdir / f"{area}.results.json").write_text(
        json.dumps({"sources": sources_hash(area, workdir / area), "status": status, "first": status}, indent=0))


def results(area: str, workdir: Path) -> dict[str, str]:
    dest = workdir / area
    proc = subprocess.run([mutmut_bin(), "results", "--all", "true"], cwd=dest, capture_output=True, text=True,
                          check=True)
    status = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s+(\S+): (.+)$", line)
        if m:
            status[m.group(1)] = m.group(2).strip()
    return status


def diff(area: str, workdir: Path, name: str) -> str:
    proc = subprocess.run([mutmut_bin(), "show", name], cwd=workdir / area, capture_output=True, text=True,
                          check=False)
    lines = [ln for ln in proc.stdout.splitlines()[1:]
             if ln.startswith(("-", "+")) and not ln.startswith(("---", "+++"))]
    return " / ".join(ln.strip() for ln in lines)


def report(areas: list[str], workdir: Path, took: dict[str, float], show_diffs: bool = True) -> dict:
    summary = {}
    for area in areas:
        saved = workdir / f"{area}.results.json"
        if not saved.exists():
            print(f"{area}: no results under {workdir}")
            continue
        status = json.loads(saved.read_text())["status"]
        first = json.loads(saved.read_text())["first"]
        if not status:
            print(f"{area}: no results under {workdir / area}")
            continue
        counted = {k: v for k, v in status.items() if k not in EQUIVALENT and v != "not checked"}
        unchecked = sum(v == "not checked" for v in status.values())
        caught = sum(v in CAUGHT for v in counted.values())
        survivors = sorted(k for k, v in counted.items() if v not in CAUGHT)
        score = caught / len(counted) if counted else float("nan")
        first_caught = sum(v in CAUGHT for k, v in first.items() if k in counted)
        summary[area] = {"first_run": f"{first_caught}/{len(counted)}", "mutants": len(status),
                         "not_checked": unchecked, "equivalent": sum(k in EQUIVALENT for k in status),
                         "caught": caught, "counted": len(counted), "score": score, "survivors": survivors,
                         "minutes": round(took.get(area, 0) / 60, 1)}
        by = {}
        for v in status.values():
            by[v] = by.get(v, 0) + 1
        print(f"\n## {area}: first run {first_caught}/{len(counted)}; now {caught}/{len(counted)} caught = "
              f"{100 * score:.1f} % ({summary[area]['equivalent']} equivalent left out"
              + (f", {unchecked} of {len(status)} not checked: a partial run" if unchecked else "") + f"; {by})"
              + (f"; {took[area] / 60:.1f} min" if area in took else ""))
        for name in survivors:
            line = f"  {name} [{counted[name]}]"
            if show_diffs:
                line += f": {diff(area, workdir, name)}"
            print(line)
    (workdir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--areas", nargs="+", choices=sorted(AREAS), default=["stats", "jobs", "core", "wrappers"])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/s1/mut"))
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--report-only", action="store_true", help="read the last run's results, run nothing")
    ap.add_argument("--recheck", action="store_true",
                    help="run again only the mutants the last full run left alive (tests added since)")
    ap.add_argument("--only", nargs="+", metavar="GLOB",
                    help="mutate only these files of the (single) area, e.g. s1gym/jobs/summary.py "
                         "(a partial run: say so with its score)")
    ap.add_argument("--before", action="store_true",
                    help="without tests/test_mutants_*.py: the score before the tests mutation testing "
                         "asked for")
    ap.add_argument("--no-diffs", action="store_true")
    ap.add_argument("--goal", type=float, default=0.85)
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    global BEFORE
    BEFORE = args.before
    if args.only:
        if len(args.areas) != 1:
            ap.error("--only takes one area")
        AREAS[args.areas[0]] = (args.only, AREAS[args.areas[0]][1])
    took: dict[str, float] = {}
    if not args.report_only:
        for area in args.areas:
            if args.recheck:
                took[area] = recheck(area, args.workdir, args.max_children)
            else:
                took[area] = run(area, args.workdir, args.max_children)
                save(area, args.workdir)
            print(f"{area}: {took[area] / 60:.1f} min", flush=True)
    summary = report(args.areas, args.workdir, took, show_diffs=not args.no_diffs)
    short = [a for a, s in summary.items() if not s["score"] >= args.goal]
    print(f"\ngoal >= {100 * args.goal:.0f} % in each area: " + ("met" if not short else f"missed in {short}"))
    return 0 if not short else 1


if __name__ == "__main__":
    raise SystemExit(main())
