"""The README's custom-policy example runs as shipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "custom_policy.py"


def test_custom_policy_example_runs_and_writes_a_job(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (job,) = (tmp_path / "jobs").iterdir()
    summary = json.loads((job / "summary.json").read_text())
    assert summary["episodes"] == 3 and summary["mean_score"] == 1.0
