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
from volbench.lab.promise import LimitChoice
from volbench.lab.throttle import Limits

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
    arguments = {"path": GROUP, "property": "limits", "value": limits.every_property()}
    execute(guest.folder / guests.QMP, "qom-set", arguments)
    changed = dataclasses.replace(guest, limits=limits)
    guests.save(changed)
    return changed


def change_limits(name: str, choice: LimitChoice) -> guests.Guest:
    """``lab limit``: the limits asked for (a product's at the guest's disk size, or
    hand-set) given to running guest ``name``."""
    return set_limits(name, choice.limits(guests.load(name).disk_bytes))
