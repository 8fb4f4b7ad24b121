"""A run's report.json as a Python object: attribute access mirroring its
keys (report.result.step_time_s), the dict and the exact JSON text, and
pandas tables of its lists where pandas is importable."""
import json


def _wrap(value):
    if isinstance(value, dict):
        return Section(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Section:
    """A mapping of report.json: its keys as attributes and as items."""

    def __init__(self, data):
        self._data = data

    def __getattr__(self, name):
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError("report has no '%s' here; it has: %s" % (name, ", ".join(self._data))) from None

    def __getitem__(self, key):
        return _wrap(self._data[key])

    def __contains__(self, key):
        return key in self._data

    def __iter__(self):
        return iter(self._data)

    def __dir__(self):
        return list(self._data)

    def keys(self):
        return self._data.keys()

    def get(self, key, default=None):
        return _wrap(self._data.get(key, default))

    def to_dict(self):
        return self._data

    def __repr__(self):
        return "Section(%s)" % ", ".join(self._data)


def _frame(rows):
    """A pandas DataFrame of `rows` (nested keys as dotted columns), or
    without pandas the rows themselves, as report.json has them."""
    try:
        import pandas
    except ImportError:
        return _wrap(rows)
    return pandas.json_normalize(rows)


class Report(Section):
    """What `tpusim run` writes to report.json (docs/report.md), with the
    table it prints (`table`) and, when run with trace=True, trace.json.
    `per_chip`, `per_chip_summary`, `collectives`, `collective_summary` and `ops` are pandas
    DataFrames when pandas is importable, else lists as report.json has them."""

    def __init__(self, text, table="", trace=""):
        super().__init__(json.loads(text))
        self._text = text
        self.table = table
        self.trace = trace

    def to_json(self):
        """report.json's text, byte for byte what the CLI writes."""
        return self._text

    def save(self, path):
        with open(path, "w") as f:
            f.write(self._text)

    @property
    def step_time_s(self):
        return self._data["result"]["step_time_s"]

    @property
    def collectives(self):
        """One row per collective of the step (report.json `collectives`),
        in a report run with report_detail="full"."""
        if "collectives" not in self._data:
            raise ValueError("Report.collectives lists every collective of a run with report_detail=\"full\"; "
                             "this one has collective_summary (Report.collective_summary)")
        return _frame(self._data["collectives"])

    @property
    def collective_summary(self):
        """One row per op, algorithm, axes, size and purpose of the step's
        collectives: count, total_bytes, time_s, exposed_s, wait_s
        (report.json `collective_summary`)."""
        return _frame(self._data.get("collective_summary") or [])

    @property
    def per_chip(self):
        """One row per chip (report.json `per_chip`), nested keys as
        dotted columns (memory.params_bytes, busy.mxu_s, ...). A pod of more
        than 64 chips lists every chip only with report_detail="full"."""
        listed = self._data.get("per_chip") or []
        summary = self._data.get("per_chip_summary")
        if summary and len(listed) < summary["chips"]:
            raise ValueError("Report.per_chip lists every chip of a run with report_detail=\"full\"; this one lists "
                             "%d of %d (chip 0 and the outliers, in report.json's per_chip): see "
                             "Report.per_chip_summary" % (len(listed), summary["chips"]))
        return _frame(listed)

    @property
    def per_chip_summary(self):
        """One row per number of per_chip (its dotted key, `field`) over
        every chip: count, min, min_chip, mean, max, max_chip (report.json
        `per_chip_summary`)."""
        fields = (self._data.get("per_chip_summary") or {}).get("fields", {})
        return _frame([dict(field=k, **v) for k, v in fields.items()])

    @property
    def ops(self):
        """One row per engine op the trace recorded (run with trace=True):
        chip, engine, name, start_s, duration_s."""
        if not self.trace:
            raise ValueError("Report.ops reads trace.json: run with tpusim.run(..., trace=True)")
        return _frame(_trace_ops(json.loads(self.trace)))

    def __repr__(self):
        exp = self._data.get("experiment", {}).get("name", "?")
        result = self._data.get("result", {})
        return "<tpusim.Report %s: step_time_s=%s>" % (exp, result.get("step_time_s"))


def _trace_ops(trace):
    """Complete events ("ph": "X") of a Chrome/Perfetto trace, with the
    process (chip) and thread (engine) names its metadata events give."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    processes, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    return [{"chip": processes.get(e["pid"], e["pid"]),
             "engine": threads.get((e["pid"], e["tid"]), e["tid"]),
             "name": e["name"],
             "start_s": e["ts"] * 1e-6,
             "duration_s": e.get("dur", 0) * 1e-6}
            for e in events if e.get("ph") == "X"]
