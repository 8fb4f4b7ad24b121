"""tpusim's Python API against the CLI and against hand counts: a run, its
Report, sets, dicts and YAML text, errors located as the CLI locates them,
a simulated failure with its numbers, validate, explain, chips, sweeps."""
import json
import re
import sys
import threading

import pytest

import tpusim
from conftest import run_cli, without_wall_clock

MATMUL = "configs/experiments/matmul-v4.yaml"


def test_matmul_report_mirrors_report_json():
    r = tpusim.run(MATMUL)
    d = r.to_dict()
    assert r.result.step_time_s == d["result"]["step_time_s"] == r.step_time_s
    assert r.experiment.name == "matmul-v4"
    assert json.loads(r.to_json()) == d
    # The FLOPs of an 8192^3 matmul by hand: 2 m k n.
    assert r.result.flops == 2 * 8192**3
    with pytest.raises(AttributeError, match="has no 'step_time'"):
        r.result.step_time


def test_set_dict_and_text_give_the_cli_numbers():
    cli = run_cli("run", MATMUL, "--set", "workload.m=4096", "--out", "/tmp/tpusim-py-set")
    assert cli.returncode == 0, cli.stderr
    with open("/tmp/tpusim-py-set/report.json") as f:
        want = without_wall_clock(f.read())
    by_set = tpusim.run(MATMUL, set={"workload.m": 4096})
    by_list = tpusim.run(MATMUL, set=["workload.m=4096"])
    with open(MATMUL) as f:
        text = f.read().replace("m: 8192", "m: 4096", 1)
    by_text = tpusim.run(text)
    assert without_wall_clock(by_set.to_json()) == want
    assert without_wall_clock(by_list.to_json()) == want
    assert by_text.result.to_dict() == want["result"]
    by_dict = tpusim.run({"name": "mm", "chip": "tpu-v4",
                          "workload": {"kind": "matmul", "m": 4096, "k": 8192, "n": 8192}})
    assert by_dict.result.to_dict() == want["result"]


def test_bad_config_carries_the_cli_message():
    path = "tests/data/bad/fidelity_typo.yaml"
    cli = run_cli("run", path, "--out", "/tmp/tpusim-py-bad")
    assert cli.returncode == 2
    with pytest.raises(tpusim.ConfigError) as caught:
        tpusim.run(path)
    err = caught.value
    assert err.cli_text == cli.stderr.strip()
    assert str(err).startswith("%s:%d:%d: %s: " % (path, err.line, err.column, err.key_path))
    assert (err.file, err.key_path) == (path, "fidelity")
    assert err.suggestion is not None and err.suggestion in err.message


def test_bad_key_in_a_dict_is_located_in_its_yaml():
    with pytest.raises(tpusim.ConfigError) as caught:
        tpusim.run({"name": "mm", "chip": "tpu-v4", "workload": {"kind": "matmul", "m": 64, "k": 64, "nn": 64}})
    err = caught.value
    # The dict's YAML: name (line 1), chip (2), workload (3), kind, m, k, nn (line 7, column 3).
    assert (err.file, err.line, err.column, err.key_path) == ("(experiment dict)", 7, 3, "workload.nn")
    assert err.suggestion == "n"


def test_bad_set_is_located_at_the_override():
    with pytest.raises(tpusim.ConfigError) as caught:
        tpusim.run(MATMUL, set={"workload.mm": 5})
    cli = run_cli("run", MATMUL, "--set", "workload.mm=5", "--out", "/tmp/tpusim-py-bad")
    assert caught.value.cli_text == cli.stderr.strip()


def test_simulated_failure_carries_its_numbers():
    path = "tests/data/bad/train_oom.yaml"
    cli = run_cli("run", path, "--out", "/tmp/tpusim-py-oom")
    assert cli.returncode == 3
    with pytest.raises(tpusim.SimulationFailed) as caught:
        tpusim.run(path)
    err = caught.value
    assert err.cli_text == cli.stderr.strip()
    assert err.reason == "does not fit"
    # TPU v4 has 32 GiB of HBM (docs/reference/tpu-specs.md#v4.hbm_capacity).
    assert err.numbers["capacity_bytes"] == 32 * 2**30
    # By hand: 64 layers x (4 d^2 + 2 d d_ff) + vocab x d = 51.8 G parameters,
    # 16 bytes each (bf16 weights and gradients, fp32 Adam's two moments and
    # master copy), before any activation.
    params = 64 * (4 * 8192**2 + 2 * 8192 * 32768) + 32000 * 8192
    assert err.numbers["needed_bytes"] >= 16 * params
    # The message's breakdown agrees: bf16 parameters within 1% of the hand
    # count, and the total it prints is the number carried.
    quoted = float(re.search(r"parameters ([0-9.]+) GiB", err.text).group(1)) * 2**30
    assert quoted == pytest.approx(2 * params, rel=0.01)
    assert "needs %.1f TiB" % (err.numbers["needed_bytes"] / 2**40) in err.text
    assert err.numbers["chip"] == 0 and err.numbers["stage"] == 0


def test_runs_in_threads_take_turns_and_agree():
    results = []

    def go():
        results.append(tpusim.run(MATMUL, set={"workload.m": 2048}).to_json())

    threads = [threading.Thread(target=go) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    assert len({json.dumps(without_wall_clock(r), sort_keys=True) for r in results}) == 1


def test_validate_explain_chips():
    assert tpusim.validate(MATMUL) == "experiment"
    assert tpusim.validate("configs/chips/tpu-v5e.yaml") == "chip"
    with pytest.raises(tpusim.ConfigError):
        tpusim.validate("tests/data/bad/fidelity_typo.yaml")
    assert tpusim.explain("chip") == run_cli("explain", "chip").stdout
    with pytest.raises(ValueError, match="unknown topic"):
        tpusim.explain("chipp")
    names = tpusim.chips()
    assert {"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"} <= set(names)


def test_dataframes():
    pandas = pytest.importorskip("pandas")
    r = tpusim.run("configs/experiments/train-hybrid-v4.yaml", trace=True, report_detail="full")
    per_chip = r.per_chip
    assert isinstance(per_chip, pandas.DataFrame)
    assert len(per_chip) == r.pod.chips == 8
    assert "memory.total_bytes" in per_chip.columns
    # The summary's distribution, against the list's own (pandas' min, max, mean).
    summary = r.per_chip_summary.set_index("field")
    for field in ("busy.mxu_s", "memory.total_bytes", "exposed_communication_s"):
        assert summary.loc[field, "min"] == per_chip[field].min()
        assert summary.loc[field, "max"] == per_chip[field].max()
        assert summary.loc[field, "mean"] == pytest.approx(per_chip[field].mean(), rel=1e-12)
        assert summary.loc[field, "count"] == len(per_chip)
    assert len(r.collectives) == len(r.to_dict()["collectives"])
    # The summary counts what the full list lists.
    assert r.collective_summary["count"].sum() == len(r.collectives)
    assert r.collective_summary["total_bytes"].sum() == r.collectives["bytes"].sum()
    ops = r.ops
    assert {"chip", "engine", "name", "start_s", "duration_s"} <= set(ops.columns)
    assert len(ops) > 0 and (ops.duration_s >= 0).all()


def test_sweep_over_axes_yields_each_point(capsys, monkeypatch):
    for name in ("tqdm", "tqdm.auto"):
        monkeypatch.setitem(sys.modules, name, None)  # the plain progress lines, tqdm installed or not
    points = list(tpusim.sweep(MATMUL, axes={"workload.m": [1024, 2048, 4096]}))
    assert [p.values["workload.m"] for p in points] == [1024, 2048, 4096]
    # FLOPs scale with m (2 m k n).
    assert [p.report.result.flops for p in points] == [2 * m * 8192 * 8192 for m in (1024, 2048, 4096)]
    assert "[3/3] p002 workload.m=4096" in capsys.readouterr().err


def test_sweep_file_points_match_the_cli_expansion():
    points = list(tpusim.sweep("configs/sweeps/amdahl-synthetic.yaml", progress=False))
    cli = run_cli("sweep", "configs/sweeps/amdahl-synthetic.yaml", "--dry-run", "--out", "/tmp/tpusim-py-sweep")
    assert cli.returncode == 0, cli.stderr
    assert len(points) >= 2
    for p in points:
        assert p.id in cli.stdout


def test_compare_names_what_moved():
    base = tpusim.run("configs/experiments/matvec-v4.yaml")
    slow = tpusim.run("configs/experiments/matvec-v4.yaml", set={"chip.hbm.bandwidth": 6e11})
    cmp = tpusim.compare(base, slow)
    # A memory-bound matvec at half v4's 1.2e12 B/s: twice the time (bytes / bandwidth).
    assert cmp["step_time_delta_s"] == pytest.approx(base.step_time_s, rel=0.06)
    # No phases in a matmul's report: the HBM's busy time moved, by about the whole change.
    assert cmp["largest_contributor"]["key"] == "result.roofline.busy_fraction.hbm"
    assert cmp["largest_contributor"]["share"] == pytest.approx(1.0, abs=0.05)
    assert "largest contributor" in tpusim.compare_text(cmp)
    # The same comparison as the CLI's, from the files a run writes.
    tpusim.run("configs/experiments/matvec-v4.yaml", out="/tmp/tpusim-py-cmp-a")
    tpusim.run("configs/experiments/matvec-v4.yaml", set={"chip.hbm.bandwidth": 6e11}, out="/tmp/tpusim-py-cmp-b")
    cli = run_cli("compare", "/tmp/tpusim-py-cmp-a", "/tmp/tpusim-py-cmp-b", "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == tpusim.compare("/tmp/tpusim-py-cmp-a", "/tmp/tpusim-py-cmp-b")


def test_what_if_records_the_chip_and_takes_a_dict_base():
    r = tpusim.run({"name": "wi", "chip": {"base": "tpu-v5e", "hbm": {"bandwidth": 2.4e12}},
                    "workload": {"kind": "matmul", "m": 8, "k": 8192, "n": 8192}})
    assert r.experiment.chip.to_dict() == {"base": "tpu-v5e", "overridden": {"hbm.bandwidth": 2.4e12}}
    with pytest.raises(tpusim.ConfigError) as caught:
        tpusim.run(MATMUL, set={"chip.hbmm.bandwidth": 1e12})
    assert caught.value.suggestion == "hbm"
    assert caught.value.file == "--set chip.hbmm.bandwidth=1000000000000.0"
