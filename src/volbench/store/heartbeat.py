"""A running run's heartbeat, refreshed in the background while the run goes on.

The owner of a run (:mod:`volbench.store.owner`) refreshes ``runs.heartbeat_at``
every :data:`~volbench.store.owner.HEARTBEAT_S` seconds, whatever the run is doing
(a long fio round, a purge, waiting on a host), so volbench on another host that
shares the store can tell a live run from one whose process died.
"""

from __future__ import annotations

import contextlib
import threading
from types import TracebackType
from typing import Protocol

import sqlalchemy as sa

from volbench.errors import VolbenchError
from volbench.store.owner import HEARTBEAT_S


class Beating(Protocol):
    def heartbeat(self, run_id: int) -> None: ...


class Heartbeat:
    """Context manager: a daemon thread beats for ``run_id`` until the block ends.

    A beat that fails (the store briefly locked or unreachable) is skipped: the
    next one tries again, and only another host's view of the run depends on it.
    """

    def __init__(self, store: Beating, run_id: int, every_s: float = HEARTBEAT_S) -> None:
        self._store = store
        self._run_id = run_id
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="volbench-heartbeat", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self._every_s):
            with contextlib.suppress(VolbenchError, sa.exc.SQLAlchemyError, OSError):
                self._store.heartbeat(self._run_id)

    def start(self) -> Heartbeat:
        """Begin beating (every ``every_s`` seconds) until :meth:`stop`."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop beating; returns when the thread has ended."""
        self._stop.set()
        self._thread.join(timeout=self._every_s + 5)

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
