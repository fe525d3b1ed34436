"""Every ```python and ```bash block of README.md and of the guides in docs/ it links runs as written, so
they cannot drift.

Python blocks run as scripts, bash blocks under ``bash -euo pipefail``; each in a fresh temporary
directory, with this interpreter's environment (the installed s1gym and the ``s1`` command), offline
and without API keys. A bash line ``s1 run ...`` gets ``--episodes 1`` appended: the README's episode
counts are for readers, the test checks that the command works. New blocks run by default. A block
is named by its first line (a prefix of it is enough, as long as it names one block) in one of two
tables, each entry with its reason:

- ``SLOW``: runs only with the slow tests (``-m slow``, part of ``bash scripts/test.sh``).
- ``NOT_RUNNABLE``: cannot run inside a test by its nature (it installs packages or runs the suite).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The pages whose blocks run: the README and the guides it sends a reader to (docs/benchmarks.md's commands
#: are benchmarks, docs/adding-a-task.md's block is a template).
PAGES = [README, *(ROOT / "docs" / f"{name}.md" for name in ("setup", "tasks", "policies", "running", "rl"))]
LANGUAGES = {"python": "python", "py": "python", "bash": "bash", "sh": "bash", "shell": "bash"}
SMALL_RUN = ["--episodes", "1"]
TIMEOUT_S = 540  # under pytest's own 600 s, so a stuck block fails with its output

SLOW = {
    "s1 run CookingWorld --policy local --wrap search --budget 100 --wrap-option episode_budget=1000 \\":
        "Search(Local) on a large test-fold CookingWorld game: 1.5 min for its one episode (load 4)",
    "s1 run CookingWorld --policy local --wrap search --budget 100 --wrap-option episode_budget=1000 --episodes 5":
        "Search(Local) on a small CookingWorld game plus loading the model: 40 s for one episode (load 4)",
    "s1 run 2048 --policy local --episodes 1 --seed 7 --job 2048-local -q":
        "Local's 2048 game, two replay pages and a GIF screenshotted in Chromium: 4 min (load 30)",
    "s1 run MiniWoB --option task=click-checkboxes --policy uniform --wrap search":
        "Search on a real Chromium page, each expansion replaying its moves: 30 s to 3 min for one episode (load 15-40)",
}
NOT_RUNNABLE = {
    "bash scripts/main.sh": "sets up the machine (apt, torch, pip into ./.venv) and runs the main job and, "
    "next line, the whole test suite, which contains this test; CI runs that suite through .ci/run",
    "pip install torch==2.13.0": "installs packages; the tests run in the environment it made",
}


@dataclass(frozen=True)
class Block:
    language: str  # "python" or "bash"
    line: int  # 1-based line of the opening fence
    code: str
    page: str = "README.md"

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.code.splitlines() if line.strip()), "")


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced python and bash blocks of a Markdown text, parsed as CommonMark (indented ones too)."""
    blocks = []
    for token in MarkdownIt("commonmark").parse(text):
        language = LANGUAGES.get(token.info.strip().split(" ")[0].lower()) if token.type == "fence" else None
        if language:
            blocks.append(Block(language, token.map[0] + 1, token.content, page))
    return blocks


def page_blocks() -> list[Block]:
    """The blocks of every page in PAGES."""
    return [b for path in PAGES for b in readme_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]


def entry_for(block: Block, table: dict[str, str]) -> str | None:
    """The table key naming ``block`` (a prefix of its first line), if any."""
    keys = [key for key in table if block.first_line.startswith(key.strip())]
    return keys[0] if keys else None


def small_run(script: str) -> str:
    """``script`` with ``--episodes 1`` appended to every plain ``s1 run`` command (argparse takes the last)."""
    lines = []
    for line in script.replace("\\\n", " ").splitlines():
        plain = line.split()[:2] == ["s1", "run"] and not any(op in line for op in ("|", "&", ";", ">", "<", "$(", "`"))
        lines.append(shlex.join([*shlex.split(line, comments=True), *SMALL_RUN]) if plain else line)
    return "\n".join(lines) + "\n"


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TYPESAFE_", "OPENAI_", "OPENROUTER_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this venv's `s1`
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    return env


def params() -> list:
    out = []
    for block in page_blocks():
        marks = []
        if (key := entry_for(block, NOT_RUNNABLE)) is not None:
            marks.append(pytest.mark.skip(reason=f"{block.page}:{block.line} not runnable: {NOT_RUNNABLE[key]}"))
        elif entry_for(block, SLOW) is not None:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(block, marks=marks, id=f"{block.page}:{block.line} {block.first_line[:60]}"))
    return out


@pytest.mark.parametrize("block", params())
def test_readme_block_runs(block: Block, tmp_path: Path) -> None:
    if block.language == "python":
        (tmp_path / "block.py").write_text(block.code, encoding="utf-8")
        command = [sys.executable, "block.py"]
    else:
        command = ["bash", "-euo", "pipefail", "-c", small_run(block.code)]
    try:
        done = subprocess.run(command, cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{block.page}:{block.line} still running after {TIMEOUT_S} s (list it in SLOW?)\n{error.stderr or ''}")
    assert done.returncode == 0, (
        f"{block.page}:{block.line} ({block.language}) failed with exit code {done.returncode}:\n"
        f"{block.code}\n--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-3000:]}"
    )


def test_the_tables_name_blocks_that_exist_once():
    """A renamed or removed block must leave the tables too (else a slow block would run by default)."""
    blocks = page_blocks()
    for table in (SLOW, NOT_RUNNABLE):
        for key in table:
            named = [f"{b.page}:{b.line}" for b in blocks if b.first_line.startswith(key.strip())]
            assert len(named) == 1, f"{key!r} names the blocks at {named}; name exactly one"


def test_the_readme_is_short_and_its_tables_have_a_line_a_row():
    """A newcomer reads it in five minutes: under 15 kB, every table row at most 200 characters (details
    live in docs/, a link away); every docs/ page it links exists."""
    import re

    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 15_000
    long_rows = [row[:60] for row in text.splitlines() if row.startswith("|") and len(row) > 200]
    assert not long_rows, f"README table rows over 200 characters: {long_rows}"
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), f"the README links {link}, which does not exist"


def test_the_harness_finds_indented_blocks_and_shrinks_runs():
    text = "# t\n\n```python\nprint(1)\n```\n\n- item\n\n  ```bash\n  s1 run X --episodes 5 \\\n      --seed 2  # c\n  ```\n\n```json\n{}\n```\n"
    python, bash = readme_blocks(text)
    assert (python.language, python.line, python.code) == ("python", 3, "print(1)\n")
    assert (bash.language, bash.line, bash.first_line) == ("bash", 9, "s1 run X --episodes 5 \\")
    assert small_run(bash.code).split() == "s1 run X --episodes 5 --seed 2 --episodes 1".split()
    assert small_run("s1 table jobs | head\n") == "s1 table jobs | head\n"


def test_the_readme_main_job_figures_are_the_benchmarks_own():
    """Every figure of the README's main-job section is quoted from docs/benchmarks.md (one home for numbers)."""
    import re

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The main job") : text.index("## Quick start")]
    figures = set(re.findall(r"\d+\.\d+ \[\d+\.\d+, \d+\.\d+\]|\d+/\d+|\d{1,3}(?:,\d{3})+", section))
    benchmarks = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert len(figures) >= 12, sorted(figures)  # the table and the sentences around it
    missing = sorted(f for f in figures if f not in benchmarks)
    assert not missing, f"README figures not in docs/benchmarks.md: {missing}"
