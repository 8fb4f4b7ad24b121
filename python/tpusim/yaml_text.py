"""Python values as the YAML the simulator reads: an experiment given as a
dict becomes block YAML (so a bad key is located at its own line), and the
`set={...}` of run() become the `--set KEY=VALUE` strings of the CLI."""
import json


def scalar(value):
    """One value as one-line YAML (flow style: JSON is YAML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def overrides(values):
    """{"workload.m": 4096, "fidelity": "pe"} -> ["workload.m=4096", "fidelity=pe"]."""
    return ["%s=%s" % (key, scalar(value)) for key, value in (values or {}).items()]


def _quoted(value):
    if isinstance(value, str):
        return json.dumps(value)
    return scalar(value)


def _lines(value, indent):
    pad = "  " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict) and item:
                yield "%s%s:" % (pad, key)
                yield from _lines(item, indent + 1)
            elif isinstance(item, list) and item and any(isinstance(x, (dict, list)) for x in item):
                yield "%s%s:" % (pad, key)
                yield from _lines(item, indent + 1)
            else:
                yield "%s%s: %s" % (pad, key, _flow(item))
    else:
        for item in value:
            if isinstance(item, dict) and item:
                first, *rest = list(_lines(item, indent + 1))
                yield "%s- %s" % (pad, first.lstrip())
                yield from rest
            else:
                yield "%s- %s" % (pad, _flow(item))


def _flow(value):
    if isinstance(value, dict):
        return "{" + ", ".join("%s: %s" % (k, _flow(v)) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is None:
        return "null"
    return _quoted(value)


def document(mapping):
    """A dict as a block-style YAML document."""
    return "\n".join(_lines(mapping, 0)) + "\n"
