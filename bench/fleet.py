"""The multi-host controller: aggregation cost and run overhead.

1. Aggregation: one client/server JSON of 64 host entries per test, made from the
   recorded two-host output (``tests/fixtures/fio/fleet_client_server_jsonplus.txt``,
   real fio entries with their json+ bins) by giving each entry another hostname,
   parsed and aggregated (:func:`volbench.analysis.aggregate.place_tests`: sums and
   percentiles of the merged bins) N times; time per output and per host entry, and
   the share of a 60 s PTS cell that the aggregation would take.
2. Run overhead: 8 fio servers on 127.0.0.2-9 (started here, each on a free port,
   killed at the end), each with a 64 MiB file in a RAM folder. The same sweep
   (randread 4k, QD 1, 4, 16, ``--runtime`` s each) runs alternately through bare
   ``fio --client`` with volbench's own job files and through ``volbench run sweep
   --hosts``; wall times side by side, and the ratio of the sums of fio's own job
   runtimes to wall time for both.

Usage: ``python bench/fleet.py [--pairs 3] [--runtime 2] [--repeat 20]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from volbench.analysis.aggregate import place_tests
from volbench.fio.parser import parse
from volbench.store.repository import Store

FIXTURE = (
    Path(__file__).resolve().parents[1] / "tests/fixtures/fio/fleet_client_server_jsonplus.txt"
)
HOSTS = 64


def sixty_four_hosts() -> str:
    """The recorded output with its host entries repeated under 64 hostnames."""
    text = FIXTURE.read_text()
    document = json.loads(text[text.find("{") : text.rfind("}") + 1])
    entries = [e for e in document["client_stats"] if e["jobname"] != "All clients"]
    originals = sorted({e["hostname"] for e in entries})
    grown = []
    for n in range(HOSTS):
        for entry in entries:
            if entry["hostname"] == originals[n % len(originals)]:
                grown.append({**entry, "hostname": f"10.0.{n // 250}.{n % 250 + 1}"})
    document["client_stats"] = grown
    return json.dumps(document)


def aggregation(repeat: int) -> dict[str, float]:
    raw = sixty_four_hosts()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        together, shares = place_tests(parse(raw))
        times.append(time.perf_counter() - started)
    entries = len(json.loads(raw)["client_stats"])
    median = statistics.median(times)
    return {
        "entries": entries,
        "tests": len(together),
        "places": len({t.hostname for t in shares}),
        "median_s": median,
        "per_entry_ms": 1000 * median / entries,
        "share_of_60s_cell": median / 60.0,
    }


@contextlib.contextmanager
def servers(count: int, folder: Path) -> Iterator[list[str]]:
    started: list[subprocess.Popen[bytes]] = []
    hosts = []
    try:
        for n in range(count):
            address = f"127.0.0.{n + 2}"
            with socket.socket() as sock:
                sock.bind((address, 0))
                port = sock.getsockname()[1]
            work = folder / f"server-{n}"
            work.mkdir()
            started.append(
                subprocess.Popen(
                    ["fio", f"--server=ip:{address},{port}"],
                    cwd=work,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            hosts.append(f"{address}:{port}")
        time.sleep(1.0)
        yield hosts
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the servers this script started
            proc.wait()


def fio_seconds(raw: str) -> float:
    """Sum over the tests of the longest job runtime (s) of any host."""
    document = json.loads(raw[raw.find("{") : raw.rfind("}") + 1])
    cells: dict[str, float] = {}
    for job in document["client_stats"]:
        if job["jobname"] != "All clients":
            cells[job["jobname"]] = max(cells.get(job["jobname"], 0.0), job["job_runtime"] / 1e3)
    return sum(cells.values())


def overhead(pairs: int, runtime: float, folder: Path) -> list[dict[str, float]]:
    rows = []
    with servers(8, folder) as hosts:
        db = folder / "bench.db"
        files = [f"--target={h}:{folder}/t{n}.img" for n, h in enumerate(hosts)]
        sweep = [
            *("run", "sweep", "--rw", "randread", "--bs", "4k", "--iodepth", "1,4,16"),
            *("--runtime", f"{runtime:g}s", "--ramp-time", "0", "--size", "64m"),
            *("--hosts", ",".join(hosts), *files, "--runs-dir", str(folder / "runs")),
        ]
        env = {**os.environ, "VOLBENCH_DB": str(db)}
        for _ in range(pairs):
            started = time.monotonic()
            subprocess.run(
                [sys.executable, "-m", "volbench", *sweep, "--format", "json"],
                env=env,
                check=True,
                capture_output=True,
            )
            volbench_wall = time.monotonic() - started
            with Store.open(str(db)) as store:
                run = store.get_run("latest")
            job_files = sorted((folder / "runs" / str(run.id) / "round-000").glob("job-*.fio"))
            client = ["fio", "--output-format=json+"]
            for host, job in zip(hosts, job_files, strict=True):
                address, port = host.rsplit(":", 1)
                client += [f"--client={address},{port}", str(job)]
            bare_dir = folder / "bare"
            bare_dir.mkdir(exist_ok=True)
            started = time.monotonic()
            bare = subprocess.run(client, cwd=bare_dir, check=True, capture_output=True, text=True)
            bare_wall = time.monotonic() - started
            rows.append(
                {
                    "volbench_wall_s": volbench_wall,
                    "volbench_fio_s": fio_seconds(run.raw_outputs[0]),
                    "bare_wall_s": bare_wall,
                    "bare_fio_s": fio_seconds(bare.stdout),
                }
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--runtime", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps({"aggregation": aggregation(args.repeat)}, indent=2))
    if shutil.which("fio") is None:
        print("fio is not installed: run `make setup`", file=sys.stderr)
        return 2
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="volbench-bench-fleet-", dir=shm) as tmp:
        rows = overhead(args.pairs, args.runtime, Path(tmp))
    for row in rows:
        row["volbench_ratio"] = row["volbench_fio_s"] / row["volbench_wall_s"]
        row["bare_ratio"] = row["bare_fio_s"] / row["bare_wall_s"]
        row["wall_ratio"] = row["volbench_wall_s"] / row["bare_wall_s"]
    print(json.dumps({"overhead": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
