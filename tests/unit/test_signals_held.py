"""Ctrl-C, SIGTERM and SIGHUP held while fio processes start (volbench.fio.ctrl_c)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from volbench.fio.ctrl_c import signals_held


def test_a_signal_held_comes_after_the_block_to_the_handler_from_before() -> None:
    came: list[int] = []
    hangup = signal.getsignal(signal.SIGHUP)
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: came.append(signum))
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGHUP)  # a second: dropped, as cli.main would
            time.sleep(0.05)
            assert came == []  # held
        assert came == [signal.SIGTERM]  # once, the first
        assert signal.getsignal(signal.SIGHUP) == hangup  # the handler from before
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_ctrl_c_held_is_raised_once_the_block_has_ended() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), signals_held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        done.append(True)
    assert done == [True]


def test_nothing_came_nothing_raised() -> None:
    with signals_held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
