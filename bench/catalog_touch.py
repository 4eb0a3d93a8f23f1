"""What recording an inline library's last use in the catalog costs a question (issue #31: one
upsert in PostgreSQL, no lock), beside the manifest lookup every question already makes.

A throw-away PostgreSQL (tests/servers.py: `fsync=off`, on this machine's disk) and one
`PostgresCatalog`; --calls times each of `touch` (the upsert), `stamp` (the question's manifest
lookup) and `unused` (an index run's expiry read over --libraries recorded uses), interleaved.

    python bench/catalog_touch.py --calls 500 --libraries 200
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import finish, machine, ms_stats, offline_env, timing_table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--libraries", type=int, default=200)
    args = parser.parse_args()
    offline_env()

    from longqa.retrieval.index.library.catalog_postgres import PostgresCatalog
    from tests.servers import postgres_server

    info = {"machine": machine(), "args": vars(args)}
    with postgres_server() as postgres:
        catalog = PostgresCatalog(Path(tempfile.mkdtemp(prefix="longqa-touch-")), postgres.uri)
        for i in range(args.libraries):
            catalog.touch(f"inline-{i}")
        timings: dict[str, list[float]] = {"touch (upsert)": [], "stamp (read)": [], "unused (expiry read)": []}
        for i in range(args.calls):
            name = f"inline-{i % args.libraries}"
            for label, call in (
                ("touch (upsert)", lambda name=name: catalog.touch(name)),
                ("stamp (read)", lambda name=name: catalog.stamp(name)),
                ("unused (expiry read)", lambda: catalog.unused(3600.0)),
            ):
                t = time.perf_counter()
                call()
                timings[label].append(time.perf_counter() - t)
        catalog.close()
    stats = {k: ms_stats(v) for k, v in timings.items()}
    info["timings"] = stats
    print(timing_table("catalog call", stats))
    finish("catalog_touch", info)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
