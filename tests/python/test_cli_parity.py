"""Python and the CLI give the same report.json for every shipped
experiment (wall-clock fields aside), all run one after another in this one
process: the simulator's kernel starts afresh for each (docs/python.md)."""
import glob
import os

import pytest

import tpusim
from conftest import ROOT, run_cli, without_wall_clock

EXPERIMENTS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "configs/experiments/*.yaml")))


@pytest.mark.parametrize("path", EXPERIMENTS)
def test_python_report_equals_cli_report(path, tmp_path):
    cli = run_cli("run", path, "--out", str(tmp_path / "cli"))
    assert cli.returncode == 0, cli.stderr
    with open(tmp_path / "cli" / "report.json") as f:
        want = f.read()
    got = tpusim.run(path, out=tmp_path / "py")
    assert without_wall_clock(got.to_json()) == without_wall_clock(want)
    with open(tmp_path / "py" / "report.json") as f:
        assert f.read() == got.to_json()


def test_every_experiment_is_covered():
    assert len(EXPERIMENTS) >= 30
