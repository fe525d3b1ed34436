"""Suite-wide rules.

In CI (``CI=true``, as ``.ci/run`` runs) every optional part is installed and ../shared is beside the
checkout, so a skipped test means something is missing that should not be: it fails instead, naming its
reason. Only the skips listed in :data:`ALLOWED_IN_CI` (tests that cannot run inside a test by their
nature) stay skips there.
"""

from __future__ import annotations

import os

import pytest

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


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_pytests_tmp(tmp_path_factory):
    """Stable-Baselines3 makes a logger folder for every model it trains, by default a new ``/tmp/SB3-<time>``
    each time: the suite's go into one folder under pytest's own temporary folders (which pytest prunes)."""
    folder = tmp_path_factory.mktemp("sb3")
    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(folder)
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = before


@pytest.fixture
def no_linger(monkeypatch):
    """The browser closes as soon as its last env does (no reuse between tests). The web test files ask for
    it on every test (their ``pytestmark``); nothing else does."""
    monkeypatch.setenv("S1GYM_BROWSER_LINGER", "0")
