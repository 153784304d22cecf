"""A module does one job, and one job fits in about 400 lines: a file longer than that is
usually two, to be split by job (issue 39). The few longer ones are one job each, listed
here with why."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("bot", "function_calls", "storage")
MAX_LINES = 400

LONGER = {
    # One grammar, one rule per kind of clause, over the words of english_words.
    "function_calls/grammar/english.py",
    # A word list (the concepts tool selection bridges between languages), no logic.
    "function_calls/selection_lexicon.py",
}


def test_each_module_fits_one_job() -> None:
    long = {
        f"{path.relative_to(ROOT)} ({lines} lines)"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in LONGER
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == set(), "split by job: " + ", ".join(sorted(long))


def test_the_longer_ones_are_still_there() -> None:
    assert all((ROOT / path).is_file() for path in LONGER)  # a stale entry hides nothing
