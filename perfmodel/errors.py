"""Errors perfmodel raises for bad input data.

Every error about a file names the file, the row or entry, and the field, so a
user can fix their own CSV or YAML without reading a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem found in a data file.

    ``where`` is a line number for CSV files (1-based, header = line 1) or an
    entry id for YAML files; ``field`` is the column or key at fault.
    """

    file: str
    where: str
    field: str
    message: str

    def __str__(self) -> str:
        loc = f"{self.file}:{self.where}" if self.where else self.file
        field = f" field '{self.field}'" if self.field else ""
        return f"{loc}:{field} {self.message}"


class DataError(ValueError):
    """A data file (benchmark CSV, hardware YAML) is malformed.

    ``problems`` lists every :class:`Problem` found (the message shows the first
    twenty), so one run reports all the rows to fix.
    """

    def __init__(self, problems: list[Problem] | Problem):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems = list(problems)
        shown = "\n  ".join(str(p) for p in self.problems[:20])
        more = len(self.problems) - 20
        tail = f"\n  ... and {more} more" if more > 0 else ""
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"{len(self.problems)} {noun} in input data:\n  {shown}{tail}")


class CatalogError(DataError):
    """The hardware catalog (or a user's platform YAML) is malformed."""


class UnknownNameError(KeyError):
    """A catalog name that does not exist; the message lists the valid names."""

    def __init__(self, kind: str, name: str, valid: list[str]):
        self.kind, self.name, self.valid = kind, name, sorted(valid)
        super().__init__(f"unknown {kind} {name!r}; valid names: {', '.join(self.valid)}")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])
