"""A running guest's QEMU monitor (QMP, the JSON protocol on ``qmp.sock`` in the
guest's folder): its disk's limits changed while it runs.

The throttle group ``tg0`` is a QOM object; ``qom-set`` of its ``limits`` property
changes the figures it is given (QEMU ``throttle_limits_to_config``), so every
figure is sent, unset ones as 0, no limit (QEMU docs/throttle.txt). The session:
QEMU's greeting, ``qmp_capabilities``, then one command and its ``return`` (events
in between are skipped).
"""

from __future__ import annotations

import dataclasses
import json
import socket
from pathlib import Path
from typing import Any

from volbench.errors import UsageError
from volbench.lab import guest as guests
from volbench.lab import io_max
from volbench.lab.promise import LimitChoice
from volbench.lab.throttle import Limits
from volbench.store.owner import Owner, alive, current

GROUP = "tg0"
"""The throttle group of the guest's disk (:func:`volbench.lab.machine.qemu_command`)."""


def execute(
    socket_path: Path, command: str, arguments: dict[str, Any], timeout_s: float = 10.0
) -> Any:
    """Run one QMP ``command`` with ``arguments``; its ``return`` value.
    UsageError naming QEMU's error (``desc``) when it refuses."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(str(socket_path))
        except OSError as exc:
            raise UsageError(f"cannot reach qemu's monitor {socket_path}: {exc.strerror}") from exc
        stream = sock.makefile("rw", encoding="utf-8")
        stream.readline()  # the greeting: {"QMP": {...}}
        for name, args in (("qmp_capabilities", {}), (command, arguments)):
            stream.write(json.dumps({"execute": name, "arguments": args}) + "\n")
            stream.flush()
            while True:
                line = stream.readline()
                if not line:
                    raise UsageError(f"qemu's monitor closed during {name}")
                answer = json.loads(line)
                if "event" not in answer:
                    break
            if "error" in answer:
                raise UsageError(f"qemu refused {name}: {answer['error'].get('desc', answer)}")
        return answer.get("return")


def limits_now(name: str) -> dict[str, int]:
    """The limits guest ``name``'s throttle group has now (every QEMU figure)."""
    guest = guests.load(name)
    found = execute(guest.folder / guests.QMP, "qom-get", {"path": GROUP, "property": "limits"})
    return {str(key): int(value) for key, value in dict(found).items()}


def set_limits(name: str, limits: Limits) -> guests.Guest:
    """Give running guest ``name``'s disk ``limits`` (all of them: an unset one is no
    limit) and record them with the guest."""
    guest = guests.load(name)
    if guests.running_pid(guest.folder) is None:
        raise UsageError(f"lab guest {name} is not running: `volbench lab up {name}`")
    value = limits.qemu().every_property()
    execute(
        guest.folder / guests.QMP, "qom-set", {"path": GROUP, "property": "limits", "value": value}
    )
    if limits.in_guest or guest.limits.in_guest:
        io_max.apply(name, limits if limits.in_guest else None)
    changed = dataclasses.replace(guest, limits=limits)
    guests.save(changed)
    return changed


def change_limits(name: str, choice: LimitChoice) -> guests.Guest:
    """``lab limit``: the limits asked for (a product's at the guest's disk size, or
    hand-set) given to running guest ``name``; they are its own from now on."""
    changed = set_limits(name, choice.limits(guests.load(name).disk_bytes))
    own = dataclasses.replace(changed, lent=None)
    guests.save(own)
    return own


def lend(name: str) -> None:
    """Record guest ``name``'s limits as its own, held by this process, before it
    sets others (the first holder's record stays: those are the guest's own)."""
    guest = guests.load(name)
    if guest.lent is None:
        guests.save(dataclasses.replace(guest, lent=guests.Lent(guest.limits, current().text())))


def give_back(name: str) -> Limits | None:
    """Give running guest ``name`` its own limits back (None: none were lent)."""
    lent = guests.load(name).lent
    if lent is None:
        return None
    guests.save(dataclasses.replace(set_limits(name, lent.limits), lent=None))
    return lent.limits


def reclaim() -> list[str]:
    """Every running guest whose limits a process that is gone still holds (a
    ``qos verify`` killed: its guests left at the plan's limits, or none) gets its
    own back; a line for each."""
    said = []
    for name in guests.names():
        try:
            guest = guests.load(name)
        except UsageError:
            continue
        if guest.lent is None or guests.running_pid(guest.folder) is None:
            continue
        holder = Owner.parse(guest.lent.holder)
        if holder is not None and alive(holder, None):
            continue
        limits = give_back(name)
        who = holder.describe() if holder is not None else "a volbench"
        said.append(
            f"{guest.place}: its own limits given back ({limits.text() if limits else '-'}):"
            f" {who}, which had changed them, is gone"
        )
    return said
