"""Shared by the tests of the Python package (tests/python/): the CLI to
compare with, and report.json without its wall-clock fields."""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The same three fields scripts/compare-reports ignores (CONTRIBUTING.md, "Determinism").
WALL_CLOCK = ("wall_time_s", "events_per_s", "peak_rss_bytes")


def tpusim_binary():
    return os.environ.get("TPUSIM_BINARY") or os.path.join(ROOT, "build", "tpusim")


def run_cli(*args, cwd=ROOT):
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    return subprocess.run([tpusim_binary()] + list(args), cwd=cwd, env=env, capture_output=True, text=True)


def without_wall_clock(report_text):
    report = json.loads(report_text)
    # A cluster's report holds each job's report, with a simulator section of its own.
    for r in [report] + [job["report"] for job in (report.get("cluster") or {}).get("jobs", [])]:
        for key in WALL_CLOCK:
            r.get("simulator", {}).pop(key, None)
    return report


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    """Every test runs from the repository root, as the CLI tests do."""
    monkeypatch.chdir(ROOT)
