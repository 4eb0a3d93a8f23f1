"""HTML to text (retrieval/read/html_text.py) on pages of growing size: seconds and function calls per page, and
each size's ratio to the smallest. Linear work keeps the calls' ratio at the size's ratio; the unit test
(tests/test_formats_html.py) holds the calls, this table shows the seconds on this machine.

    .venv/bin/python bench/html_linear.py [--rounds 3]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table, whole_number_options  # noqa: E402
from longqa.retrieval.read.html_text import html_to_text  # noqa: E402
from tests.test_formats_html import _calls  # noqa: E402

UNIT = "<div><span>word</span> text <p>para</p></div><table><tr><td>a</td><td rowspan='2'>b</td></tr></table>"
SIZES = (500, 2_000, 4_000, 16_000)


def main() -> int:
    args = whole_number_options(__doc__, rounds=3)
    rows, base = [], None
    for n in SIZES:
        page = UNIT * n
        seconds = min(_timed(page) for _ in range(args.rounds))
        calls = _calls(lambda page=page: html_to_text(page))
        base = base or (seconds, calls, n)
        rows.append([n, f"{len(page):,}", f"{seconds:.3f}", f"{calls:,}", f"{n / base[2]:.0f}x"])
        rows[-1] += [f"{seconds / base[0]:.1f}x", f"{calls / base[1]:.1f}x"]
    print(md_table(["units", "characters", "best s", "calls", "size", "seconds", "calls ratio"], rows))
    return 0


def _timed(page: str) -> float:
    t0 = time.perf_counter()
    html_to_text(page)
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
