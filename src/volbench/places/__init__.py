"""Kinds of place a run's rounds run on, other than a target on this machine: a
host running fio's server, a host reached through SSH, a lab guest. Each kind is
one entry of :data:`volbench.places.table.KINDS`; a kind's own module is the only
code that knows how its places are spelled (``--hosts`` values), how fio reaches
them, how they are sampled, checked, purged and cleaned up after a killed run.
"""
