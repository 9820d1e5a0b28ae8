"""The sampler script run on another host, and the parse of what it prints.

A host volbench reaches through a shell (an ``ssh://`` host, a lab guest's shell
port) is sampled by a POSIX ``sh`` script (dash, bash and busybox ``sh`` alike) that
prints, once a second, the files the local sampler reads (targets/sampler.py):

    @begin N
    /proc/uptime:SECONDS IDLE
    /sys/class/block/DEV/stat:FIELDS
    /proc/pressure/io:some avg10=... / full avg10=...
    /proc/PID/stat:...                        (each process named fio, at most 64)
    /proc/PID/task/TID/schedstat:RUN WAIT N   (each of their threads)
    /proc/stat:cpuN ...                       (the cpu lines only)
    @end N

each line prefixed with its file by ``grep -H``. Before the first block it prints
``@device NAME`` (the whole disk under the target: a device's own major:minor, a
file's filesystem ``st_dev`` through ``/sys/dev/block/MAJ:MIN``, a partition's
parent, as :func:`volbench.targets.kernel_counters.disk_of` resolves it) or ``@nodevice``,
``@hwq N`` (its blk-mq hardware queues) and ``@hz N`` (``getconf CLK_TCK``; USER_HZ
is 100 where it says nothing). The clock of a block is the host's
``/proc/uptime`` (proc(5): seconds since boot, 10 ms resolution).

The stream is not trusted: lines over :data:`MAX_LINE` bytes, blocks over
:data:`MAX_BLOCK_LINES` lines, a block without ``@end`` or without its clock or CPU
lines are skipped and counted, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from volbench.fio.remote_path import SAFE_PATH
from volbench.targets.kernel_counters import (
    Pressure,
    ProcessTimes,
    parse_disk_stat,
    parse_pressure,
    parse_proc_stat,
    parse_process_ticks,
    parse_schedstat,
)
from volbench.targets.sampler import Reading

MAX_LINE = 4096
"""Bytes a line may hold (a /proc/stat cpu line is under 200)."""
MAX_BLOCK_LINES = 20000
"""Lines a block may hold: 4,096 CPUs, 64 fio processes and their threads."""
MAX_PROCESSES = 64
"""fio processes the script reports at most."""
USER_HZ = 100
"""Clock ticks a second where the host does not say (Linux's USER_HZ on every arch)."""
DEVICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z")
PRESSURE = "/proc/pressure/"
STAT = "/proc/stat"
_PROCESS = re.compile(r"/proc/(\d{1,10})/stat\Z")
_THREAD = re.compile(r"/proc/(\d{1,10})/task/(\d{1,10})/schedstat\Z")


def _device_lines(path: str | None) -> str:
    """sh that sets ``s`` to the whole disk under ``path`` (see the module); every
    number goes through ``tr`` first, so the shell's arithmetic never fails."""
    if path is None or not SAFE_PATH.match(path):
        return "s=; "
    folder = path.rsplit("/", 1)[0] or "/"
    hexa = "| tr -cd 0-9a-f | cut -c1-8)"
    return (
        f"d=; if [ -b {path} ]; then x=$(stat -L -c %t {path} {hexa}; "
        f"y=$(stat -L -c %T {path} {hexa}; "
        '[ -n "$x" ] && [ -n "$y" ] && d=$((0x$x)):$((0x$y)); '
        f"else q={path}; [ -e $q ] || q={folder}; "
        "n=$(stat -L -c %d $q | tr -cd 0-9 | cut -c1-15); "
        '[ -n "$n" ] && d=$(((n>>8)&4095)):$(((n&255)|((n>>12)&1048320))); fi; '
        'l=; [ -n "$d" ] && l=$(readlink -f /sys/dev/block/$d); '
        '[ -e "$l/partition" ] && l=${l%/*}; s=${l##*/}; '
    )


def sampler_script(path: str | None, interval_s: int = 1, max_blocks: int = 7 * 86400) -> str:
    """The script (one line, no single quote and no ``!``: it passes a login shell,
    csh too, inside ``'...'``) sampling the disk under ``path`` (None, or a path
    :data:`SAFE_PATH` refuses: no disk) every ``interval_s`` seconds after each block,
    ``max_blocks`` times at most, and at once for each line on its standard input.

    A reader in the background (not a child of the script) sends the script SIGUSR1
    for each line; its trap sets ``g`` and ends the script's children (the ``sleep``
    between blocks, from ``/proc/$$/task/$$/children``: proc(5)), so the ``wait`` for
    it ends however the signal falls: before the ``sleep`` starts (``g`` is tested
    after), or before or during the ``wait`` (POSIX, "wait"). dash has no ``read -t``.
    It ends when what reads it goes away (a write to a closed pipe or socket), its
    reader at the end of its input."""
    return (
        "exec 2>/dev/null; "
        + _device_lines(path)
        + 'if [ -n "$s" ] && [ -r /sys/class/block/$s/stat ]; then echo "@device $s"; '
        'echo "@hwq $(ls /sys/class/block/$s/mq | grep -c ^[0-9])"; '
        "t=/sys/class/block/$s/stat; else echo @nodevice; t=; fi; "
        'echo "@hz $(getconf CLK_TCK)"; '
        'trap "g=1; z=; read z < /proc/$$/task/$$/children; kill \\$z" USR1; '
        "exec 3<&0 0</dev/null; "
        "( (while read x <&3 && kill -USR1 $$; do :; done) >/dev/null & ); exec 3<&-; i=0; "
        f"while [ $i -lt {int(max_blocks)} ]; do g=; i=$((i+1)); f=; k=0; "
        "for x in /proc/[0-9]*; do c=; read c < $x/comm; "
        f'if [ "$c" = fio ] && [ $k -lt {MAX_PROCESSES} ]; then k=$((k+1)); '
        'f="$f $x/stat $x/task/*/schedstat"; fi; done; '
        'echo "@begin $i"; grep -H "" /proc/uptime $t /proc/pressure/io /proc/pressure/memory $f; '
        'grep -H ^cpu /proc/stat; echo "@end $i" || exit 0; '
        f'sleep {int(interval_s)} & [ -n "$g" ] || wait; done'
    )


@dataclass
class _Block:
    number: str
    lines: list[tuple[str, str]] = field(default_factory=list)
    bad: bool = False


@dataclass
class StreamParser:
    """Turns the script's lines into :class:`~volbench.targets.sampler.Reading` s (their
    clock the host's uptime): :meth:`line` takes one line, returns a reading at the
    end of a good block. ``device``/``hw_queues``/``hz`` are what the header said;
    ``skipped``: blocks left out as malformed."""

    device: str | None = None
    hw_queues: int | None = None
    hz: int = USER_HZ
    skipped: int = 0
    _block: _Block | None = None

    def overlong(self) -> None:
        """A line over :data:`MAX_LINE` bytes came: its block is skipped."""
        if self._block is not None:
            self._block.bad = True

    def line(self, text: str) -> Reading | None:
        text = text.rstrip("\r\n")
        if text.startswith("@"):
            return self._marker(text[1:].split())
        block = self._block
        if block is None:
            return None
        path, sep, rest = text.partition(":")
        if not sep or len(block.lines) >= MAX_BLOCK_LINES:
            block.bad = True
        else:
            block.lines.append((path, rest))
        return None

    def _marker(self, words: list[str]) -> Reading | None:
        kind, value = (words[0], words[1:]) if words else ("", [])
        if kind == "begin" and len(value) == 1:
            if self._block is not None:
                self.skipped += 1  # never ended
            self._block = _Block(value[0])
            return None
        block, self._block = self._block, None
        if kind == "end" and block is not None:
            reading = None if block.bad or value != [block.number] else self._read(block)
            self.skipped += reading is None
            return reading
        if block is not None:
            self.skipped += 1
        if kind == "device" and len(value) == 1 and DEVICE.match(value[0]):
            self.device = value[0]
        elif kind == "hwq" and value and value[0].isdigit():
            self.hw_queues = int(value[0][:6]) or None
        elif kind == "hz" and value and value[0].isdigit() and int(value[0][:6]) > 0:
            self.hz = int(value[0][:6])
        return None

    def _read(self, block: _Block) -> Reading | None:
        """The reading of a complete block; None without its clock or CPU lines."""
        uptime = disk = None
        texts: dict[str, list[str]] = {
            "/proc/stat": [],
            PRESSURE + "io": [],
            PRESSURE + "memory": [],
        }
        ticks: dict[int, int] = {}
        threads: dict[int, dict[int, tuple[int, int]]] = {}
        for path, text in block.lines:
            if path == "/proc/uptime":
                uptime = _seconds(text)
            elif path in texts:
                texts[path].append(text)
            elif self.device and path == f"/sys/class/block/{self.device}/stat":
                disk = parse_disk_stat(text)
            elif match := _PROCESS.match(path):
                found = parse_process_ticks(text)
                if found is not None:
                    ticks[int(match[1])] = found
            elif match := _THREAD.match(path):
                run = parse_schedstat(text)
                if run is not None:
                    threads.setdefault(int(match[1]), {})[int(match[2])] = run
        cpus = parse_proc_stat("\n".join(texts[STAT]))
        if uptime is None or not cpus:
            return None
        processes = {p: ProcessTimes(t, threads.get(p, {})) for p, t in ticks.items()}
        memory, io = texts[PRESSURE + "memory"], texts[PRESSURE + "io"]
        return Reading(uptime, cpus, disk, _pressure(memory), _pressure(io), processes)


def _seconds(text: str) -> float | None:
    """The first field of /proc/uptime (seconds since boot, 2 decimals)."""
    first = text.split()[0] if text.split() else ""
    return float(first) if re.fullmatch(r"\d{1,12}(\.\d{1,9})?", first) else None


def _pressure(lines: list[str]) -> Pressure | None:
    return parse_pressure("\n".join(lines)) if lines else None
