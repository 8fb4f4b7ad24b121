"""tpusim.sweep: an experiment at many points, each run in this process
one after another, yielded as it finishes, with a progress bar (tqdm when
importable, a line per point on stderr otherwise)."""
import itertools
import sys

from . import _tpusim


class Point:
    """One finished point: its id (p000, ...), the swept values by key, the
    overrides it ran with, and its Report."""

    def __init__(self, id, values, overrides, report):
        self.id = id
        self.values = values
        self.overrides = overrides
        self.report = report

    def __repr__(self):
        return "<tpusim.Point %s %s: step_time_s=%s>" % (self.id, self.values, self.report.result.get("step_time_s"))


def _axes_points(axes, combine):
    keys = list(axes)
    columns = [list(axes[k]) for k in keys]
    if combine == "zip":
        if len({len(c) for c in columns}) > 1:
            raise ValueError("combine='zip' needs axes of one length, got %s" % {k: len(c) for k, c in zip(keys, columns)})
        rows = zip(*columns)
    elif combine == "product":
        rows = itertools.product(*columns)
    else:
        raise ValueError("combine: 'product' or 'zip', not %r" % combine)
    return keys, [dict(zip(keys, row)) for row in rows]


class _Progress:
    def __init__(self, total, enabled):
        self.bar = None
        self.total, self.done, self.enabled = total, 0, enabled
        if enabled:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(total=total, unit="point")
            except ImportError:
                pass

    def step(self, label):
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(label)
            self.bar.update(1)
        elif self.enabled:
            print("[%d/%d] %s" % (self.done, self.total, label), file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def sweep(source, axes=None, set=None, combine="product", progress=True):
    """Yields a Point per point as it finishes.

    sweep("configs/sweeps/amdahl-synthetic.yaml"): the points of a sweep file,
    as `tpusim sweep` expands them (every point is checked before any runs).
    sweep(experiment, axes={"workload.m": [1024, 2048]}, set={...}): an
    experiment (path, YAML text or dict) over the product (or combine="zip")
    of the axes' values; any key `set` takes is an axis, chip keys too."""
    from . import check, run  # the package's, once it is imported
    if axes is None:
        _, experiment, keys, points = _tpusim.sweep_points(str(source))
        plan = [(pid, dict(zip(keys, values)), list(sets)) for pid, values, sets in points]
    else:
        experiment = source
        keys, rows = _axes_points(axes, combine)
        base = dict(set or {})
        plan = [("p%03d" % i, row, {**base, **row}) for i, row in enumerate(rows)]
        for _, _, sets in plan:
            check(experiment, set=sets)  # every point loads before anything runs, as tpusim sweep does
    bar = _Progress(len(plan), progress)
    try:
        for pid, values, sets in plan:
            report = run(experiment, set=sets)
            label = "%s %s: %.6g s" % (pid, " ".join("%s=%s" % kv for kv in values.items()),
                                       report.result.get("step_time_s") or float("nan"))
            bar.step(label)
            yield Point(pid, values, sets, report)
    finally:
        bar.close()
