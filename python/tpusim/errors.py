"""The two failures of a run that are not bugs, as the command line tells
them (docs/interface.md): bad input (exit 2) and a simulated system that
fails (exit 3). The extension raises them with what the CLI prints."""
import re

_SUGGESTION = re.compile(r"did you mean '([^']*)'\?")


class ConfigError(ValueError):
    """Bad input, located: `str(err)` is "file:line:column: key.path: message",
    `err.cli_text` exactly what `tpusim run` prints on stderr."""

    def __init__(self, text, file, line, column, key_path, message):
        super().__init__(text)
        self.text = text
        self.file = file
        self.line = line or None  # 1-based; None when the problem has no place in a file
        self.column = column or None
        self.key_path = key_path
        self.message = message
        found = _SUGGESTION.search(message)
        self.suggestion = found.group(1) if found else None
        self.cli_text = "error: " + text


class SimulationFailed(RuntimeError):
    """The simulated system cannot do the job: it does not fit, deadlocks or
    runs away. `numbers` holds the figures the message quotes, by name
    (needed_bytes, capacity_bytes, chip, time_s, waiting_chips, ...)."""

    def __init__(self, text, numbers):
        super().__init__(text)
        self.text = text
        self.numbers = dict(numbers)
        self.reason = _reason(text)
        self.cli_text = "simulation failed: " + text


def _reason(text):
    for reason in ("does not fit", "deadlock"):
        if reason in text.split("\n", 1)[0]:
            return reason
    return "runaway" if "with work left" in text else "other"
