"""The remote sampler: its script's stream (recorded, and damaged on purpose) parsed
into the local sampler's samples; the script under dash and busybox sh; the sampler
thread over a pipe standing for its channel."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from volbench.targets.kernel_counters import disk_of
from volbench.targets.remote_sampler import RemoteSampler
from volbench.targets.remote_stream import MAX_BLOCK_LINES, MAX_LINE, StreamParser, sampler_script
from volbench.targets.sampler import Reading, sample_between

FIXTURES = Path(__file__).parent.parent / "fixtures" / "remote_sampler"
RECORDED = (FIXTURES / "loop_randread_500iops.txt").read_text()
READS = (330260, 330765, 331268, 331772)  # loop2's reads completed, block by block
UPTIME = (11196.31, 11197.32, 11198.33, 11199.33)


def readings(text: str, parser: StreamParser | None = None) -> list[Reading]:
    parser = parser or StreamParser()
    return [r for line in text.splitlines() if (r := parser.line(line)) is not None]


def blocks(text: str) -> list[str]:
    """The recorded stream's blocks, each from ``@begin`` to ``@end``, and its header."""
    head, *rest = text.split("@begin ")
    return [head, *("@begin " + b for b in rest)]


def test_recorded_stream_is_the_loop_devices_reads() -> None:
    parser = StreamParser()
    found = readings(RECORDED, parser)
    assert (parser.device, parser.hw_queues, parser.hz, parser.skipped) == ("loop2", 1, 100, 0)
    assert [r.time_s for r in found] == list(UPTIME)
    assert [r.disk.reads if r.disk else None for r in found] == list(READS)
    assert all(sorted(r.cpus) == [0, 1] and r.io and r.memory for r in found)
    assert all(r.processes for r in found)  # the fio processes running then
    samples = [sample_between(a, b, parser.hz) for a, b in itertools.pairwise(found)]
    for sample, (before, after), (t0, t1) in zip(
        samples, itertools.pairwise(READS), itertools.pairwise(UPTIME), strict=True
    ):
        assert sample is not None and sample.iops == pytest.approx((after - before) / (t1 - t0))
        assert sample.iops == pytest.approx(500, rel=0.02)  # fio's rate_iops
        assert sample.fio_cpu_cores is not None and len(sample.cpu_busy_pct) == 2


@pytest.mark.parametrize(
    ("damage", "skipped"),
    [
        (lambda b: b.replace("@end", "@ended"), 1),  # no end: the next begin drops it
        (lambda b: b.replace("@end 2", "@end 7"), 1),  # an end of another block
        (lambda b: b.replace("/proc/uptime:", "/proc/uptime:abc "), 1),  # no clock
        (lambda b: b.replace("/proc/uptime:", "nonsense\n/proc/uptime:"), 1),  # no file name
        (lambda b: "".join(x for x in b.splitlines(True) if "cpu" not in x), 1),  # no CPU line
        (lambda b: b.replace("/proc/stat:cpu0 ", "/proc/stat:cpu0 x\x00\ufffd "), 0),  # cpu0 lost
        (lambda b: b.replace("@end 2", "@begin 9"), 2),  # 2 and 9 never end
        (lambda b: b + "@device ../../x\n@hz -5\n@hwq many\n", 0),  # refused, kept as they were
    ],
)
def test_a_damaged_block_is_skipped_and_the_others_kept(
    damage: Callable[[str], str], skipped: int
) -> None:
    head, *rest = blocks(RECORDED)
    text = "".join([head, rest[0], damage(rest[1]), *rest[2:]])
    parser = StreamParser()
    found = readings(text, parser)
    assert parser.skipped == skipped and parser.device == "loop2" and parser.hz == 100
    assert len(found) == (3 if skipped else 4)  # the damaged block alone is lost
    assert found[0].disk is not None and found[-1].disk is not None
    assert [r.time_s for r in found] == [t for t in UPTIME if t != UPTIME[1] or not skipped]


def test_a_block_of_too_many_lines_is_skipped() -> None:
    head, first, *rest = blocks(RECORDED)
    padded = first.replace("@end 1", "/proc/stat:cpu9 1 2 3 4 5\n" * MAX_BLOCK_LINES + "@end 1")
    parser = StreamParser()
    assert len(readings(head + padded + "".join(rest), parser)) == 3 and parser.skipped == 1


def test_random_damage_never_raises() -> None:
    """Bytes of the recording flipped, cut and repeated at random (fixed seed): no
    exception, and what comes out are readings with a clock and CPUs."""
    pick = random.Random(24)
    for _ in range(300):
        data = bytearray(RECORDED.encode())
        for _ in range(pick.randint(1, 12)):
            at = pick.randrange(len(data))
            action = pick.randrange(3)
            if action == 0:
                data[at] = pick.randrange(256)
            elif action == 1:
                del data[at : at + pick.randint(1, 400)]
            else:
                data[at:at] = data[pick.randrange(len(data)) :][: pick.randint(1, 400)]
        parser = StreamParser()
        found = readings(data.decode("ascii", errors="replace"), parser)
        assert len(found) <= 8
        assert all(r.time_s > 0 and r.cpus for r in found)


class PipeChannel:
    """A channel whose stream is a pipe the test writes the script's output to."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self.closed = False
        self.pokes = 0

    def open(self) -> IO[bytes]:
        return os.fdopen(self.read_end, "rb")

    def write(self, data: bytes) -> None:
        os.write(self.write_end, data)

    def poke(self) -> None:
        self.pokes += 1

    def reason(self) -> str:
        return "the test closed the pipe"

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.write_end)


def test_sampler_keeps_the_rounds_samples_on_this_machines_clock() -> None:
    head, *rest = blocks(RECORDED)
    channel = PipeChannel()
    now = [1_700_000_000.0]
    sampler = RemoteSampler("ssh://h", channel, clock=lambda: now[0])
    channel.write((head + rest[0]).encode())
    sampler.open(ready_s=5)
    assert sampler.failure is None and sampler.device == "loop2"
    sampler.begin()
    for block in rest[1:-1]:
        channel.write(block.encode())
    deadline = time.monotonic() + 10
    while sampler.mark() < 3:  # the reader thread has taken the blocks so far
        assert time.monotonic() < deadline
        time.sleep(0.01)
    mark = sampler.mark()
    channel.write(b"x" * (MAX_LINE + 10) + b"\n" + rest[-1].encode())  # an overlong line first
    samples = sampler.end(mark)
    assert len(samples) == 3 and channel.pokes == 1
    assert [s.time_s for s in samples] == pytest.approx(
        [1_700_000_000 + t - UPTIME[0] for t in UPTIME[1:]]
    )
    done = sum(s.iops * (t1 - t0) for s, t0, t1 in zip(samples, UPTIME, UPTIME[1:], strict=False))
    assert done == pytest.approx(READS[-1] - READS[0])  # every read the device completed
    sampler.close()
    assert sampler.failure is None and sampler.end(wait=False) == ()


def test_a_stream_that_ends_is_the_samplers_failure() -> None:
    channel = PipeChannel()
    channel.close()
    sampler = RemoteSampler("ssh://h", channel)
    sampler.open(ready_s=5)
    assert sampler.failure == "its sampling session ended (the test closed the pipe)"


def test_script_is_one_line_a_login_shell_passes_inside_quotes() -> None:
    script = sampler_script("/dev/vdb")
    assert "'" not in script and "\n" not in script and "!" not in script
    assert "/dev/vdb" in script
    hostile = sampler_script("/tmp/x;reboot")
    assert "reboot" not in hostile and "s=; " in hostile  # no disk for such a path


@pytest.mark.parametrize("where", ["file", "missing", "tmpfs"])
@pytest.mark.parametrize("shell", ["dash", "busybox"])
def test_script_runs_under_dash_and_busybox_sh(shell: str, where: str, tmp_path: Path) -> None:
    """Two blocks from the shell (busybox: with only busybox's applets on PATH), parsed:
    the disk is the one disk_of finds here for the same file, for a file fio has not
    made yet (the folder's), and none on tmpfs."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    target = tmp_path / "target.img"
    if where == "file":
        target.write_bytes(b"\0" * 4096)
    elif where == "tmpfs":
        if not Path("/dev/shm").is_dir():
            pytest.skip("no /dev/shm")
        target = Path("/dev/shm/volbench-remote-sampler-test-missing")
    env = {"PATH": os.environ.get("PATH", "")}
    command = [shell, "-c", sampler_script(str(target), 0, 2)]
    if shell == "busybox":
        applets = tmp_path / "bin"
        applets.mkdir()
        for name in ("stat", "tr", "cut", "readlink", "ls", "grep", "getconf", "sleep"):
            (applets / name).symlink_to(shutil.which("busybox") or "busybox")
        env["PATH"] = str(applets)
        command = [shutil.which("busybox") or "busybox", "sh", "-c", command[2]]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30).stdout
    parser = StreamParser()
    found = readings(out, parser)
    assert len(found) == 2 and parser.skipped == 0 and found[1].time_s >= found[0].time_s
    expected = disk_of(str(target if where == "file" else target.parent))
    assert parser.device == expected and (where != "tmpfs" or expected is None)
    assert (found[0].disk is None) == (parser.device is None)


@pytest.mark.parametrize("shell", ["dash", "busybox"])
def test_a_line_on_its_input_asks_the_script_for_a_block_at_once(shell: str) -> None:
    """With a 5 s interval, each line on the script's input brings a block within half
    a second, however soon after a block it comes (dash has no ``read -t``: the
    script's reader signals it); once its reader is gone, the next block ends it."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    command = [shell, "-c"] if shell == "dash" else [shell, "sh", "-c"]
    proc = subprocess.Popen(
        [*command, sampler_script(None, 5, 20)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    out = proc.stdout

    def block() -> str:
        lines = []
        while not (line := out.readline().decode()).startswith("@end"):
            assert line, "the script ended"
            lines.append(line)
        return "".join(lines)

    try:
        block()
        for _ in range(10):
            asked = time.monotonic()
            proc.stdin.write(b"\n")
            proc.stdin.flush()
            assert "/proc/uptime:" in block()
            assert time.monotonic() - asked < 0.5
        proc.stdout.close()
        proc.stdin.write(b"\n")  # wakes it to write to nobody
        proc.stdin.flush()
        assert proc.wait(timeout=3) == -13  # SIGPIPE
    finally:
        proc.stdin.close()  # its reader ends at the end of its input
        if proc.poll() is None:
            proc.kill()  # the shell this test started
            proc.wait()
