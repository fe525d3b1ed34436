"""The family seam in the code itself: generic modules name no task family, and the import graph runs one
way (a family imports the generic floors, never the reverse).

"Generic" is everything of the distribution outside ``s1gym/tasks/``: ``s1gym/`` (core, models, engines,
runner, jobs, reporting, ui, rl, datasets, registration), ``policies/`` and ``wrappers/``. A module there
names a family when its code (not a comment or a docstring) imports ``s1gym.tasks``, or an identifier or a
string holds a declared task's name or a family's distinctive name. The names come from the registry, so a
family added later is covered without touching this test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from s1gym import registration

ROOT = Path(__file__).resolve().parents[1]
GENERIC = sorted(
    [p for p in (ROOT / "s1gym").rglob("*.py") if "tasks" not in p.relative_to(ROOT / "s1gym").parts]
    + list((ROOT / "policies").rglob("*.py"))
    + list((ROOT / "wrappers").rglob("*.py"))
)
#: s1gym's own families; each family module lives at s1gym/tasks/<name>/
OWN = [f for f in registration.families() if f.package.startswith("s1gym.tasks.")]
#: the engines and data only one family uses: naming them is naming the family
FAMILY_LIBRARIES = ("textworld_express", "alfworld", "rlcard", "mujoco", "miniwob")


def _forbidden_words() -> re.Pattern[str]:
    names = {t.short for f in OWN for t in f.tasks if t.listed} | {t.task_name for f in OWN for t in f.tasks if t.listed}
    # family names that are ordinary words ("text", "games", "web") are caught through imports only
    names |= {f.name for f in OWN if f.name.lower() not in {"text", "games", "web", "desktop"}}
    names |= set(FAMILY_LIBRARIES)
    words = sorted({re.escape(n.lower()) for n in names}, key=len, reverse=True)
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(words)})(?![a-z0-9])")


def _split_identifier(name: str) -> str:
    """``TWXModel`` -> ``twx model``, ``view_2048`` -> ``view 2048``: words an identifier is made of."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return spaced.replace("_", " ").lower()


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function, attribute docs)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def family_names_in(path: Path) -> list[str]:
    """Each place in ``path``'s code that names a family: ``line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    words = _forbidden_words()
    hits = []
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.ImportFrom):
            texts = [node.module or ""]
            if (node.module or "").startswith("s1gym.tasks") or node.module == "s1gym" and any(
                    a.name == "tasks" for a in node.names):
                hits.append(f"{node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import):
            hits += [f"{node.lineno}: imports {a.name}" for a in node.names if a.name.startswith("s1gym.tasks")]
            texts = [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if "s1gym.tasks." in node.value:
                hits.append(f"{node.lineno}: names module {node.value!r}")
            texts = [node.value.lower()]
        elif isinstance(node, ast.Name):
            texts = [_split_identifier(node.id)]
        elif isinstance(node, ast.Attribute):
            texts = [_split_identifier(node.attr)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts = [_split_identifier(node.name)]
        elif isinstance(node, ast.arg):
            texts = [_split_identifier(node.arg)]
        elif isinstance(node, ast.keyword) and node.arg:
            texts = [_split_identifier(node.arg)]
        for text in texts:
            for match in words.finditer(text.replace(".", " ")):
                hits.append(f"{getattr(node, 'lineno', '?')}: {match.group(0)!r} in {text[:60]!r}")
    return hits


def test_the_registry_knows_every_own_family():
    """Every folder of s1gym/tasks/ is a family the entry points declare (a folder that forgot its entry
    point would be a family nobody can make)."""
    folders = {p.parent.name for p in (ROOT / "s1gym" / "tasks").glob("*/family.py")}
    assert {f.name for f in OWN} == folders and {"alfworld", "games", "twx", "web"} <= folders


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: str(p.relative_to(ROOT)))
def test_generic_code_names_no_family(path: Path):
    hits = family_names_in(path)
    assert not hits, f"{path.relative_to(ROOT)} names a task family in code (move it into the family's folder " \
                     f"and read it through s1gym.registration):\n" + "\n".join(hits)


def test_the_check_catches_a_family_name(tmp_path: Path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""CookingWorld in a docstring is fine."""\nfrom s1gym.tasks.twx.model import TWXModel\n'
                      'WEIGHTS = {"CookingWorld": 1}\n\ndef view_2048():\n    return "ok"\n')
    hits = family_names_in(sample)
    assert sorted(h.split(":")[0] for h in hits) == ["2", "2", "3", "5"], hits


def test_families_import_no_generic_layer_above_them():
    """A family may import the floors below it (core, models, engines, family, errors, checks, stats,
    datasets), never the layers that read families (policies, wrappers, runner, jobs, reporting, ui,
    registration). The fitting and benchmark scripts (``fit*.py``, ``bench.py``) are the exception: like
    bench/, they are commands run offline that play Local and Search, and nothing in the package imports them."""
    above = ("s1gym.policies", "s1gym.wrappers", "s1gym.runner", "s1gym.jobs", "s1gym.reporting", "s1gym.ui",
             "s1gym.registration", "s1gym.rl")
    offenders = []
    for path in sorted((ROOT / "s1gym" / "tasks").rglob("*.py")):
        if path.name.startswith("fit") or path.name == "bench.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {m}" for m in modules if m.startswith(above)]
    assert not offenders, "a family imports a layer above it:\n" + "\n".join(offenders)


def test_nothing_in_the_package_imports_a_fitting_script():
    """The fitting scripts and the harness they share (``s1gym.tools``) sit above every layer: no package
    module imports them (they import Local and Search)."""
    importers = []
    for path in sorted((ROOT / "s1gym").rglob("*.py")):
        if path.name.startswith("fit") or path.name == "bench.py" or "tools" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (re.search(r"\.(fit(_\w+)?|bench)$", node.module or "")
                                                     or (node.module or "").startswith("s1gym.tools")):
                importers.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}")
    assert not importers, "a package module imports a fitting script:\n" + "\n".join(importers)


def test_the_model_floor_imports_on_its_own():
    """``s1gym.models`` sits below the policies (which import it): importing one of its modules first, in a
    fresh interpreter, must not go through ``s1gym.policies`` (it did, and stopped on a circular import)."""
    import subprocess
    import sys

    code = "import s1gym.models.minilm, s1gym.models.minilm_runtime, sys; print('s1gym.policies' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
