"""The PTS report: a page per test (:mod:`.pages`), each test's sheets and charts in
a module of its own, laid out like the spec's pages."""
