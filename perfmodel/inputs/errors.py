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


class InputError(ValueError):
    """A request or input file a check rejected; the message names the file (and line)
    and the field, and says what is allowed."""


class TextFileError(InputError):
    """A file that is not UTF-8 text: ``path``, ``line`` (0: unknown) and ``reason``."""

    def __init__(self, what: str, path, line: int, reason: str):
        self.path, self.line, self.reason = str(path), line, reason
        super().__init__(f"{what} {path}{f':{line}' if line else ''}: {reason}")


#: byte-order marks of encodings perfmodel does not read, with their names
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def read_text(path, what: str = "file") -> str:
    """The text of a UTF-8 file (a UTF-8 byte-order mark, as Excel writes, is dropped).

    Raises :class:`FileNotFoundError` naming ``what`` and the path when it cannot be
    read, and :class:`InputError` for a binary file or another encoding (UTF-16 / 32
    by their byte-order marks, else the offset of the first byte that is not UTF-8).
    """
    from pathlib import Path

    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise FileNotFoundError(f"{what} {p}: {exc.strerror or exc}") from None
    for bom, name in _OTHER_BOMS:
        if raw.startswith(bom):
            raise TextFileError(what, p, 0, f"is {name} text; save it as UTF-8")
    if b"\x00" in raw:
        raise TextFileError(what, p, 0, "is not a text file (it holds NUL bytes)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TextFileError(
            what, p, line, f"byte 0x{raw[exc.start]:02x} is not UTF-8 text; save the file as UTF-8"
        ) from None
