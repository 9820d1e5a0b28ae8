"""The clouds' own fio benchmark recipes: each cloud's published commands, as data.

A recipe (:class:`~volbench.recipes.model.Recipe`) is one procedure of one vendor
page: the page's title, address and the day its text was read, every fio command or
job file as the page gives it (``source``), the same options as fio reads them
(``fio``), the step's kind (``prepare``: GCP fills the disk, AWS initializes a volume
restored from a snapshot, Azure warms its host cache; ``measure``), the figure it
reports and the figures the page expects. The recipes are YAML files in ``data/``
(schema: ``RECIPES.md``), read by :mod:`volbench.recipes.loader`; a step's fio job
text, the page's target replaced by the user's and optionally scaled down for a
rehearsal, is :func:`volbench.recipes.jobs.render`.
"""
