"""The artifact a user installs: the sdist and the wheel built from this tree, the wheel installed (not
editable) into a fresh virtual environment, then the commands a user types first.

The fresh environment installs the wheel alone (``--no-deps``) and then sees the project's dependencies
through a ``.pth`` line naming this interpreter's site-packages. A path line in a ``.pth`` file does not run
the ``.pth`` files of the folder it names, so the editable install's finder there never loads: every
``s1gym`` module comes from the wheel (asserted). The wheel is built by ``python -m build`` from the sdist
it builds first, so a file missing from either fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from test_readme import README, readme_blocks

ROOT = Path(__file__).resolve().parents[1]
#: Source folders whose ``.py`` files the wheel must carry, and the import name each maps to.
SOURCE_FOLDERS = {"s1gym": "s1gym", "policies": "s1gym/policies", "wrappers": "s1gym/wrappers"}

pytestmark = pytest.mark.slow  # builds and installs a wheel: about a minute


def tree_files(root: Path) -> list[str]:
    """The files git tracks, and those it does not ignore, relative to ``root`` (what a clean clone holds,
    plus work not yet committed)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    return [name for name in listed if name and (root / name).is_file() and not (root / name).is_symlink()]


def copy_tree(root: Path, target: Path) -> None:
    for name in tree_files(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes((root / name).read_bytes())


def wheel_folders_missing(wheel: Path, source: Path) -> list[str]:
    """Source folders holding ``.py`` files whose files are not in the wheel, as the wheel would name them."""
    with zipfile.ZipFile(wheel) as archive:
        held = {Path(name).parent.as_posix() for name in archive.namelist() if name.endswith(".py")}
    missing = []
    for folder, import_path in SOURCE_FOLDERS.items():
        for file in sorted((source / folder).rglob("*.py")):
            relative = file.parent.relative_to(source / folder)
            if "__pycache__" in relative.parts:
                continue
            in_wheel = (Path(import_path) / relative).as_posix()
            if in_wheel not in held and in_wheel not in missing:
                missing.append(in_wheel)
    return missing


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel path, source copy, the fresh venv's bin folder, environment to run it with)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    copy_tree(ROOT, source)
    dist = base / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        check=True, capture_output=True, timeout=300,
    )
    wheels = sorted(dist.glob("s1gym-*.whl"))
    assert len(wheels) == 1 and sorted(dist.glob("s1gym-*.tar.gz")), sorted(p.name for p in dist.iterdir())
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheels[0])],
        check=True, capture_output=True, timeout=300,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    Path(site, "s1gym-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}")
    return wheels[0], source, venv / "bin", env


def run(installed, *command: str, cwd: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``command`` with the fresh venv first on PATH, in ``cwd`` (default: the venv's folder, never a
    checkout, whose s1gym/ ``python -c`` would import from the working directory)."""
    _, _, bin_dir, env = installed
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd or bin_dir.parent,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_wheel_holds_every_source_folder(installed):
    wheel, source, _, _ = installed
    assert wheel_folders_missing(wheel, source) == []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"s1gym/py.typed", "s1gym/tasks/twx/data/local_cookingworld.json", "s1gym/tasks/web/web_page.js",
            "s1gym/tasks/alfworld/data/json_2.1.1/scenes/pick_and_place_simple-SoapBar-None-Cabinet-901/"
            "trial_s1gym_0/initial_state.pddl", "s1gym/reporting/replay/assets/replay.js"} <= names
    # the families are declared in the wheel's metadata, where s1gym.registration finds them
    points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        declared = archive.read(points).decode()
    assert "[s1gym.families]" in declared and "twx = s1gym.tasks.twx.family:FAMILY" in declared
    assert not any(name.startswith(("policies/", "wrappers/", "tests/")) for name in names)  # nothing generic


def test_a_folder_left_out_of_the_wheel_is_named(installed, tmp_path):
    wheel, source, _, _ = installed
    pruned = tmp_path / "pruned.whl"
    with zipfile.ZipFile(wheel) as archive, zipfile.ZipFile(pruned, "w") as out:
        for item in archive.infolist():
            if not item.filename.startswith("s1gym/tasks/web/rules/"):
                out.writestr(item, archive.read(item))
    assert wheel_folders_missing(pruned, source) == ["s1gym/tasks/web/rules"]


def test_the_installed_package_imports_from_the_wheel_and_says_its_version(installed):
    _, _, bin_dir, _ = installed
    where = run(installed, str(bin_dir / "python"), "-c",
                "import json, s1gym, s1gym.policies, s1gym.wrappers, importlib.metadata as m; "
                "print(json.dumps([s1gym.__file__, s1gym.policies.__file__, s1gym.wrappers.__file__, "
                "s1gym.__version__, m.version('s1gym')]))")
    files, version, metadata_version = json.loads(where.stdout)[:3], *json.loads(where.stdout)[3:]
    assert all(Path(f).is_relative_to(bin_dir.parent) for f in files), files
    assert version == metadata_version != "0+unknown"
    assert run(installed, str(bin_dir / "s1"), "--version").stdout.strip() == f"s1gym {version}"
    assert run(installed, str(bin_dir / "python"), "-m", "s1gym", "--version").stdout.strip() == f"s1gym {version}"
    listed = run(installed, str(bin_dir / "s1"), "list").stdout
    assert all(task in listed for task in ("s1/CookingWorld-v0", "s1/ALFWorld-v0", "s1/Blackjack-v0"))


@pytest.mark.parametrize(
    "job",
    [
        ["Blackjack", "--policy", "rule", "--episodes", "3"],
        ["2048", "--policy", "rule", "--episodes", "1"],
        ["Millionaire", "--policy", "uniform", "--episodes", "1"],
        ["TicketRouter", "--policy", "rule", "--episodes", "3"],
        ["CookingWorld", "--policy", "local", "--episodes", "1", "--option", "size=small"],
        ["ALFWorld", "--policy", "rule", "--episodes", "1"],
    ],
    ids=lambda job: job[0],
)
def test_one_short_job_per_family_runs_from_the_wheel(installed, tmp_path, job):
    _, _, bin_dir, _ = installed
    run(installed, str(bin_dir / "s1"), "run", *job, "--seed", "1", "--out", str(tmp_path), "-q", cwd=tmp_path)
    summaries = list(tmp_path.rglob("summary.json"))
    assert len(summaries) == 1
    results = [json.loads(p.read_text()) for p in tmp_path.rglob("result.json") if p.parent.parent != tmp_path]
    assert results and all(r.get("exception_info") is None for r in results), results


def test_the_readme_quick_start_runs_against_the_wheel(installed, tmp_path):
    _, _, bin_dir, _ = installed
    blocks = [b for b in readme_blocks(README.read_text()) if b.language == "python"]
    script = tmp_path / "quick_start.py"
    script.write_text(blocks[0].code)
    run(installed, str(bin_dir / "python"), str(script), cwd=tmp_path)


@pytest.mark.parametrize(
    ("start", "module", "classes"),
    [
        ("gym.make('s1/CookingWorld-v0', size='small'); env.reset(seed=1)", "s1gym.tasks.twx.snapshots",
         ("s1gym/twx/S1Snapshots.class", "s1gym/jvm/S1DeepCopy.class")),
        ("gym.make('s1/ScienceWorld-v0', task='boil'); env.reset(seed=0)", "s1gym.tasks.scienceworld.helper",
         ("s1gym/scienceworld/S1ScienceWorld.class", "s1gym/jvm/S1DeepCopy.class")),
    ],
    ids=["twx", "scienceworld"],
)
def test_forks_restore_snapshots_compiled_from_the_wheels_java(installed, tmp_path, start, module, classes):
    _, _, bin_dir, env = installed
    script = (
        "import gymnasium as gym, s1gym\n"
        f"env = {start}; env.step(0)\n"
        "fork = env.fork(); a = fork.step(1)[0]; b = env.step(1)[0]\n"
        "assert a == b and env.engine().can_snapshot, 'no snapshot'\n"
        "assert env._pool().replayed_moves == 0, env._pool().replayed_moves\n"
        f"import {module} as m; print(m.SOURCE)\n"
    )
    env = {**env, "S1GYM_CACHE": str(tmp_path)}  # compiled afresh, from the installed sources
    done = subprocess.run([str(bin_dir / "python"), "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert Path(done.stdout.strip()).is_relative_to(bin_dir.parent)
    for compiled in classes:  # each family's helper and the shared copier, from the wheel's sources
        assert list(tmp_path.glob(f"java/*/{compiled}")), compiled
