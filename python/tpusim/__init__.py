"""tpusim from Python: run experiments, sweep them, check and explain
configs, with the simulator in this process (docs/python.md).

    import tpusim
    r = tpusim.run("configs/experiments/matmul-v4.yaml", set={"workload.m": 4096})
    r.result.step_time_s
"""
import json
import os

from . import _tpusim
from .errors import ConfigError, SimulationFailed
from .report import Report, Section
from .sweeping import Point, sweep
from .yaml_text import document, overrides

__all__ = ["run", "sweep", "validate", "chips", "explain", "compare", "compare_text", "Report", "Section", "Point", "ConfigError",
           "SimulationFailed", "set_log_level", "__version__"]
__version__ = _tpusim.version


def _source(experiment):
    """(text or path, is_text, the name messages give the text)."""
    if isinstance(experiment, dict):
        return document(experiment), True, "(experiment dict)"
    if isinstance(experiment, os.PathLike):
        return os.fspath(experiment), False, ""
    if isinstance(experiment, str):
        if "\n" in experiment or (":" in experiment and not os.path.exists(experiment)):
            return experiment, True, "(experiment text)"
        return experiment, False, ""
    raise TypeError("experiment: a path, YAML text or a dict, not %s" % type(experiment).__name__)


def _sets(values):
    if values is None:
        return []
    if isinstance(values, dict):
        return overrides(values)
    return list(values)  # already "KEY=VALUE" strings


def run(experiment, set=None, out=None, trace=False, report_detail="summary"):
    """Simulates `experiment` (a file path, YAML text or a dict) as `tpusim run`
    does, with `set` overriding keys ({"workload.m": 4096} or ["workload.m=4096"]).
    Writes nothing unless `out` names a folder (then report.json, and trace.json
    with trace=True, as `tpusim run --out` writes them). `report_detail` is
    `tpusim run --report-detail`: "summary" (collective_summary only) or
    "full" (also every collective, Report.collectives). Returns a Report.
    Raises ConfigError (bad input) or SimulationFailed (does not fit, deadlock,
    runaway)."""
    source, is_text, origin = _source(experiment)
    text, table, trace_json = _tpusim.run(source, is_text, origin, _sets(set), os.fspath(out) if out else "",
                                          bool(trace), report_detail)
    return Report(text, table, trace_json)


def check(experiment, set=None):
    """Loads and checks `experiment` without running it: (name, chips)."""
    source, is_text, origin = _source(experiment)
    return _tpusim.check(source, is_text, origin, _sets(set))


def validate(path):
    """What `tpusim validate PATH` checks; returns the file's kind (chip,
    pod, experiment, sweep) or raises ConfigError."""
    return _tpusim.validate(os.fspath(path))


def explain(topic, *args):
    """The text `tpusim explain TOPIC ARGS...` prints: explain("chip"),
    explain("train"), explain("mxu", "--rows", "8", ...)."""
    return _tpusim.explain([topic] + [str(a) for a in args])


def chips():
    """The chip names `chip:` takes (configs/chips/ and $TPUSIM_CONFIG_DIR/chips)."""
    names = set()
    for d in _tpusim.chip_dirs(""):
        if os.path.isdir(d):
            names.update(f[:-5] for f in os.listdir(d) if f.endswith(".yaml"))
    return sorted(names)


def _side(run):
    if isinstance(run, Report):
        return run.to_json(), True, run.experiment.name
    return os.fspath(run), False, os.fspath(run)


def compare(a, b):
    """`tpusim compare A B --json` as a dict: each of a, b a Report, a run
    folder or a report.json path. Signed deltas from a to b of the step time,
    its phases, exposed communication, memory per category and busy
    fractions, and the largest contributor (docs/interface.md)."""
    return json.loads(_tpusim.compare(*_side(a), *_side(b)))


def compare_text(comparison):
    """The table `tpusim compare` prints, for a compare() result."""
    return _tpusim.compare_text(json.dumps(comparison))


def set_log_level(level):
    """trace, debug, info (long runs' progress), warn (the default here), error, off."""
    _tpusim.set_log_level(level)
