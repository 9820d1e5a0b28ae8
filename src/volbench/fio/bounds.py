"""The largest values volbench gives fio, and how far a typed range is expanded.

Every number a user types for fio is checked against these before any job is
built, so a hostile value is one line (exit 2), never a job fio refuses, a
traceback or a grid that fills the memory:

* :data:`MAX_IODEPTH` = 32,768 outstanding I/Os per job: io_uring's most entries
  per ring (``IORING_MAX_ENTRIES``), the default engine; fio 3.33 does not clamp
  its ring, so ``--ioengine=io_uring --iodepth=65536`` fails in ``io_queue_init``
  (EINVAL: tried). libaio takes up to ``fs.aio-max-nr`` (65,536 by default) and
  fio's own option has no upper bound (``fio --cmdhelp=iodepth``: ``max=-1``).
* :data:`MAX_NUMJOBS` = 4,096 jobs: fio's ``REAL_MAX_JOBS`` (fio.h), the most
  threads or processes one fio runs (``--max-jobs`` cannot raise it).
* :data:`MAX_BLOCK_SIZE` = 2 GiB - 4 KiB: the most one read or write moves on
  Linux (``MAX_RW_COUNT``, fs/read_write.c: ``INT_MAX & PAGE_MASK``).
* :data:`MAX_LIST_VALUES` = 256 values in one list option (``--iodepth 1..256``),
  and :data:`MAX_POINTS` = 4,096 tests in one plan: a range is refused before it
  is expanded when it would give more.
* :data:`MAX_DURATION_S`: a runtime, ramp or stall time of at most 366 days.
"""

from __future__ import annotations

MAX_IODEPTH = 32_768
MAX_NUMJOBS = 4_096
MAX_BLOCK_SIZE = 2**31 - 4096
MAX_LIST_VALUES = 256
MAX_POINTS = 4_096
MAX_DURATION_S = 366 * 86_400.0
