"""The runner the request checks in scripts/ share.

Each check (sdk_check_*.py, sigv4_check_bedrock.py) reads every `*.json` file
of one directory, which the Rust tests wrote, and checks it in its own way;
this walks the files, reports a file that cannot be read or is not JSON,
prints one line per error (`file: error`) and ends with `N passed, M failed`.
The exit status is 1 if anything failed or the directory holds no file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

# A check: the file's JSON and its text, to the errors it finds (none when it passes).
Check = Callable[[Any, str], Iterable[str]]


def usage(doc: str) -> int:
    """Prints the usage line of a script's docstring (its third line); exit status 2."""
    print(doc.strip().splitlines()[2], file=sys.stderr)
    return 2


def check_files(directory: Path, what: str, check: Check) -> int:
    """Runs `check` over every `*.json` file of `directory` (holding `what`)."""
    files = sorted(directory.glob("*.json")) if directory.is_dir() else []
    if not files:
        print(f"no {what} in {directory}")
        print("0 passed, 0 failed")
        return 1
    passed = failed = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            value = json.loads(text)
        except (OSError, ValueError) as error:
            print(f"{path.name}: (file): {error}")
            failed += 1
            continue
        errors = list(check(value, text))
        for error in errors:
            print(f"{path.name}: {error}")
        if errors:
            failed += 1
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv: list[str], doc: str, what: str, check: Check) -> int:
    """A script whose one argument is the directory: `check_files` over it."""
    if len(argv) != 2:
        return usage(doc)
    return check_files(Path(argv[1]), what, check)
