"""A run's owner: alive on this host by /proc (pid and start time), elsewhere by its
heartbeat; a running run whose owner is gone reads as interrupted."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from volbench.model import RunSettings, RunStatus, TargetInfo
from volbench.store import owner
from volbench.store.heartbeat import Heartbeat
from volbench.store.repository import Store
from volbench.store.schema import runs


def test_this_process_is_alive_and_a_dead_or_reused_pid_is_not() -> None:
    me = owner.current()
    assert owner.Owner.parse(me.text()) == me
    assert owner.alive(me, None)
    gone = dataclasses.replace(me, pid=2**22 + 17)  # above pid_max's default: no process
    assert not owner.alive(gone, None)
    reused = dataclasses.replace(me, start_ticks=me.start_ticks + 1)  # same pid, later start
    assert not owner.alive(reused, None)


def test_another_host_is_alive_while_its_heartbeat_is_fresh() -> None:
    other = dataclasses.replace(owner.current(), host="elsewhere.example")
    now = datetime.now(UTC)
    fresh = (now - timedelta(seconds=owner.STALE_S / 2)).isoformat(timespec="seconds")
    stale = (now - timedelta(seconds=owner.STALE_S * 2)).isoformat(timespec="seconds")
    assert owner.alive(other, fresh, now)
    assert not owner.alive(other, stale, now)
    assert not owner.alive(other, None, now)
    assert owner.alive(None, None, now)  # recorded before owners were: nothing says otherwise
    assert owner.Owner.parse("garbage") is None


def test_a_run_whose_process_died_reads_as_interrupted(tmp_path: Path) -> None:
    target = TargetInfo(path="/tmp/x", kind="file", capacity_bytes=1 << 20)
    with Store.open(str(tmp_path / "v.db")) as store:
        run_id = store.create_run("quick", target, {}, {}, RunSettings())
        assert store.get_run(run_id).status is RunStatus.RUNNING
        assert store.running_owner(run_id) == owner.current().describe()
        with Heartbeat(store, run_id, every_s=0.01):
            pass
        dead = dataclasses.replace(owner.current(), pid=2**22 + 17).text()
        with store._begin(write=True) as conn:
            conn.execute(runs.update().where(runs.c.id == run_id).values(owner=dead))
        run = store.get_run(run_id)
        assert run.status is RunStatus.INTERRUPTED
        assert run.error is not None and f"volbench resume {run_id}" in run.error
        assert [r.id for r in store.list_runs(status="interrupted")] == [run_id]
        assert store.list_runs(status="running") == []
        assert store.running_owner(run_id) is None
        store.reopen_run(run_id)  # resume takes it over
        assert store.get_run(run_id).status is RunStatus.RUNNING


def test_the_heartbeat_thread_and_the_run_share_a_file_store(tmp_path: Path) -> None:
    """Beats borrow pooled connections the run's own thread uses too: a SQLite store
    must take that (it once refused: objects created in another thread)."""
    target = TargetInfo(path="/tmp/x", kind="file", capacity_bytes=1 << 20)
    failures: list[Exception] = []
    beats: list[float] = []

    class Recording:
        def __init__(self, store: Store) -> None:
            self.store = store

        def heartbeat(self, run_id: int) -> None:
            try:
                self.store.heartbeat(run_id)
                beats.append(time.monotonic())
            except Exception as exc:
                failures.append(exc)

    with Store.open(str(tmp_path / "v.db")) as store:
        run_id = store.create_run("quick", target, {}, {}, RunSettings())
        with Heartbeat(Recording(store), run_id, every_s=0.002):
            for round_no in range(40):
                with store._begin():  # the run's thread holds one while a beat needs one
                    time.sleep(0.004)
                store.add_round(run_id, round_no, "{}", [], {})
        assert store.round_count(run_id) == 40
    assert not failures, failures[0]
    assert len(beats) >= 2  # beats ran beside the rounds (10 at a load of 15, 40+ alone)
