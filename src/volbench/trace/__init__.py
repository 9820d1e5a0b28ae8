"""Block I/O traces: the only code that knows the kernel's block tracing (tracefs
tracepoints, blktrace) and blkparse's text. Pure data and parsers, plus the
capture itself (:mod:`volbench.trace.tracefs`, :mod:`volbench.trace.blktrace`)."""
