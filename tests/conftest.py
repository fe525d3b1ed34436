"""Suite-wide rules.

In CI (``CI=true``, as ``.ci/run`` runs) every optional part is installed and ../shared is beside the
checkout, so a skipped test means something is missing that should not be: it fails instead, naming its
reason. Only the skips listed in :data:`ALLOWED_IN_CI` (tests that cannot run inside a test by their
nature) stay skips there.
"""

from __future__ import annotations

import os

import pytest

# One math thread per process: the suite runs one test at a time beside the engines it starts (JVMs,
# Chromium, servers), and torch's small models (MaskablePPO's MLP, the RL examples) spend most of a
# multi-threaded step waiting on each other there: a 2,048-step MaskablePPO run took 85 s with the default
# threads on a loaded 2-core machine and 9.5 s with one. Set before any test imports torch or numpy's BLAS;
# subprocesses (``s1 run`` in the docs' blocks) inherit it. A value already set is kept.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

#: Reasons (prefixes matched inside the skip message) a test may be skipped for in CI, each with why.
ALLOWED_IN_CI = {
    "not runnable:": "README blocks that install packages or run the suite itself (tests/test_readme.py)",
}


def skip_allowed(message: str) -> bool:
    return any(allowed in message for allowed in ALLOWED_IN_CI)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes") or not report.skipped:
        return
    if hasattr(report, "wasxfail"):
        return
    message = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    if not skip_allowed(message):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped in CI, where every optional part is installed: {message}\n"
            "(install what it names in scripts/setup.sh, or add the reason to tests/conftest.py's ALLOWED_IN_CI)"
        )


@pytest.fixture
def no_linger(monkeypatch):
    """The browser closes as soon as its last env does (no reuse between tests). The web test files ask for
    it on every test (their ``pytestmark``); nothing else does."""
    monkeypatch.setenv("S1GYM_BROWSER_LINGER", "0")
