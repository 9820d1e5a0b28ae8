"""The PTS headers: the run's (under the first table) and each test page's (platform,
device, purge, preconditioning, active range, TC/QD, data pattern, write cache,
rounds, steady-state window)."""

from __future__ import annotations

from volbench.model import RunRecord
from volbench.plans.pts import catalog
from volbench.plans.pts.options import PtsOptions, PtsSetup
from volbench.report.pts.data import PtsData
from volbench.report.pts.pages import page_for
from volbench.report.pts.steady import variable_label, window_text
from volbench.report.run_charts import run_header

EDITIONS = {
    "enterprise": "SNIA SSS PTS-E 1.1 / PTS 2.0.2",
    "client": "SNIA SSS PTS-C 1.1 / PTS 2.0.2",
}
"""The editions a run's profile follows (DESIGN.md "SNIA PTS facts")."""


def header_notes(run: RunRecord) -> tuple[str, ...]:
    """The PTS test header: purge, preconditioning, active range, TC/QD, pattern, cache.
    Preconditioning and round limits are those of the tests the run has (from its
    options, not a stored text: a WSAT run has no WIPC and no steady-state rounds)."""
    s = run.setup(PtsSetup)
    options = s.options
    fixed = []
    for test in options.tests:
        tc_qd = page_for(test).fixed_tc_qd
        if tc_qd is not None:
            fixed.append(f"{test} TC{tc_qd[0]}/QD{tc_qd[1]}")
    own = f" ({'; '.join(fixed)})" if fixed else ""
    notes = [
        f"run {run.id} · {EDITIONS.get(options.profile, 'SNIA SSS PTS')} ({options.profile})"
        f" · {run.status.value} · target {run.target.path}"
        f" · ioengine {run.settings.ioengine}",
        f"purge: {s.purge_method} · preconditioning: {catalog.preconditioning(options)}"
        f" · active range {options.active_range_pct}% ({s.active_bytes >> 20} MiB)",
        " · ".join(
            [
                f"TC x QD {options.threads} x {options.iodepth}{own}",
                f"data pattern {s.data_pattern}",
                f"write cache {s.write_cache}",
                f"cells {options.cell_seconds:g} s",
                *round_limits(options),
            ]
        ),
    ]
    reasons = run.settings.non_compliant_reasons
    if reasons:
        notes.append("NON-COMPLIANT with PTS: " + "; ".join(reasons))
    if run.error:
        notes.append(f"note: {run.error}")
    return tuple(notes)


def round_limits(options: PtsOptions) -> list[str]:
    """The round limits of the run's tests: steady-state rounds, WSAT samples."""
    tests = catalog.tests_of(options)
    limits = [f"max rounds {options.max_rounds}"] if any(t.steady_state for t in tests) else []
    return limits + [note for t in tests if (note := t.limit_note(options))]


def page_header(data: PtsData, test: str) -> tuple[tuple[str, str], ...]:
    """The PTS test header of one test's page."""
    run, s, options = data.run, data.setup, data.options
    page = page_for(test)
    tc, qd = page.fixed_tc_qd or (options.threads, options.iodepth)
    fields = [
        *run_header(run),
        ("Purge", s.purge_method),
        ("Preconditioning", catalog.preconditioning_for(test)),
        ("Active range", f"{options.active_range_pct}% ({data.active >> 20} MiB)"),
        ("TC x QD", f"{tc} x {qd}"),
        ("Data pattern", s.data_pattern),
        ("Write cache", s.write_cache),
        ("Cell length", f"{options.cell_seconds:g} s"),
    ]
    reasons = run.settings.non_compliant_reasons
    if reasons:
        fields.append(("Non-compliant", "; ".join(reasons)))
    fields += page.header_fields(data)
    if catalog.by_name(test).steady_state:
        ss = data.history(test, "ss")
        verdict = data.verdict(test)
        fields.append(("Rounds", f"{len(ss)} (at most {options.max_rounds})"))
        if verdict.steady:
            rounds = verdict.window_rounds
            window = f"reached, rounds {rounds[0] + 1}-{rounds[-1] + 1}"
        else:
            window = f"NOT achieved after {len(ss)} rounds (figures: last window)"
        fields.append(("Steady state", window))
        for name, w in verdict.windows.items():
            fields.append((f"Window {variable_label(name)}", window_text(name, w)))
    return tuple(fields)
