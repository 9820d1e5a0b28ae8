"""The lab: QEMU guests whose virtio disk is throttled the way clouds limit volumes
(``volbench lab``), reachable as places ``--hosts lab://NAME`` (docs/lab.md)."""
