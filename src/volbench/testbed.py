"""Where a run ran, as recorded with it: its target (identity and size), the place
of each target on a run on several at once, the host and what each ``fio --server``
host answered. Frozen dataclasses, pure data, no I/O (re-exported by
:mod:`volbench.model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volbench.records import structure


@dataclass(frozen=True)
class TargetIdentity:
    """What a target is, not what it is called: checked again before every round and
    on resume (:mod:`volbench.targets.identity`), so a path that comes to name
    something else (a re-pointed link, a loop device attached to another image, a
    file replaced) is never written.

    ``path`` is the canonical absolute path (every link resolved) and the one fio
    is given. ``number`` is ``MAJOR:MINOR``: a block device's own number, or the
    number of the filesystem holding a file, whose ``inode`` is set. ``diskseq``
    (Linux 5.15+: a number the kernel gives each new medium, counted up when a loop
    device is attached again) and ``boot`` (``/proc/sys/kernel/random/boot_id``)
    tell a device apart within one boot; ``source`` is what names it across boots
    (a WWID or serial, a loop device's backing file and offset, a dm/md UUID).
    """

    path: str
    kind: str  # "block" or "file"
    number: str
    capacity_bytes: int
    inode: int | None = None
    diskseq: int | None = None
    boot: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class HostCache:
    """A cache on this machine in front of a target, as its place records it: QEMU's
    cache mode of a lab guest's disk (``mode``: ``"writeback"``, the image read and
    written through this machine's page cache, ``cache.direct=off``; ``"none"``, opened
    with O_DIRECT, no cache: QEMU's documentation, "-drive ... cache=cache"), what it is
    in words (``what``) and the most it can hold (``size_bytes``: the machine's memory,
    MemTotal; None where the mode caches nothing)."""

    mode: str
    what: str
    size_bytes: int | None = None


@dataclass(frozen=True)
class TargetInfo:
    """What volbench knows about the thing it measures."""

    path: str
    kind: str  # "file" or "block"
    capacity_bytes: int
    logical_block_bytes: int | None = None
    physical_block_bytes: int | None = None
    rotational: bool | None = None
    model: str | None = None
    scheduler: str | None = None
    write_cache: str | None = None
    device: str | None = None  # the block device a file lives on
    filesystem: str | None = None
    created_by_volbench: bool = False
    identity: TargetIdentity | None = None
    """None: a remote target, an imported run, or a run stored by an older volbench."""
    host_cache: HostCache | None = None
    """A cache on this machine in front of the target (a lab guest's disk: QEMU's cache
    mode); None: none recorded."""

    @classmethod
    def from_record(cls, record: Mapping[str, Any], what: str = "target") -> TargetInfo:
        """A stored target back (what a record leaves out reads as unknown: path "",
        kind "unknown", 0 bytes); :class:`volbench.records.RecordError` naming
        ``what`` when a value does not fit."""
        return structure({**_UNKNOWN_TARGET, **record}, cls, what)


@dataclass(frozen=True)
class NamedTarget:
    """A file or device a user's job file names (``volbench run job``), as prepared:
    its target (identity, size) and whether a job of the file writes it (else its jobs
    only read it: a device they read is checked as read, never held exclusively)."""

    target: TargetInfo
    writes: bool


@dataclass(frozen=True)
class Place:
    """Where one share of a multi-target run runs: a target on this machine
    (``host`` None) or on a host running ``fio --server`` (``HOST`` or ``HOST:PORT``).

    Per-place results are stored with ``hostname`` = :attr:`label`; the run's own
    (aggregate) results have none.
    """

    host: str | None
    path: str

    @property
    def label(self) -> str:
        return f"{self.host}:{self.path}" if self.host else self.path


@dataclass(frozen=True)
class HostInfo:
    hostname: str
    cpu_count: int
    cpu_model: str
    memory_bytes: int
    kernel: str
    fio_version: str
    os: str = ""

    @classmethod
    def from_record(cls, record: Mapping[str, Any], what: str = "host") -> HostInfo:
        """A stored host back (what a record leaves out reads as unknown or 0);
        :class:`volbench.records.RecordError` naming ``what`` when a value does not fit."""
        return structure({**_UNKNOWN_HOST, **record}, cls, what)


_UNKNOWN_TARGET: Mapping[str, Any] = {"path": "", "kind": "unknown", "capacity_bytes": 0}
_UNKNOWN_HOST: Mapping[str, Any] = {
    "hostname": "unknown",
    "cpu_count": 0,
    "cpu_model": "unknown",
    "memory_bytes": 0,
    "kernel": "unknown",
    "fio_version": "unknown",
}


@dataclass(frozen=True)
class HostProbe:
    """What one host running ``fio --server`` answered: its identity, or why it did
    not answer (:func:`volbench.fio.server.probe`); ``seconds`` the answer took."""

    address: str
    answers: bool
    seconds: float
    hostname: str | None = None
    os: str | None = None
    arch: str | None = None
    fio_version: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class PlaceRecord:
    """One place of a run on several targets at once, as recorded with it: its label
    (``HOST:PATH`` or the path), the host (None: this machine), the path there (None:
    not stated, e.g. an imported fio client output) and its target as prepared."""

    label: str
    host: str | None = None
    path: str | None = None
    target: TargetInfo | None = None
    kind: str | None = None
    """The kind of place it is (:data:`volbench.places.table.KINDS`: ``server``,
    ``ssh``, ``lab``); None: on this machine, or recorded by a volbench that did not
    record kinds (its host's kind is then found from its name)."""
    unsampled: str | None = None
    """Why its host gave no host and disk samples from the run's start, one line as the
    limit sheets show it (no channel to the host, or its sampling session failed);
    None: it was sampled, sampling was off, or the place's ``kind`` is None."""
