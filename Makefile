# The two commands of the README, and the checks CI runs beside the tests.
.PHONY: setup quick test lint bench docs

setup:
	scripts/setup

QUICK_REPORT = volbench-work/quick-report.html

quick: setup
	.venv/bin/volbench run quick
	.venv/bin/volbench report latest -o $(QUICK_REPORT)
	@.venv/bin/python -c 'from volbench.store.database import display_url, resolve_url; \
	url = resolve_url(None, create=False); \
	print("results stored in", url.database if url.get_backend_name() == "sqlite" \
	else display_url(url))'
	@echo "report: open $(QUICK_REPORT) in a browser (e.g. xdg-open $(QUICK_REPORT));" \
	"the runs stored: .venv/bin/volbench runs; this one: .venv/bin/volbench show latest"

test:
	scripts/test

# lint-imports checks the layer order (docs/design.md) against the contracts in
# pyproject.toml ([tool.importlinter]).
lint: setup
	.venv/bin/ruff check src tests bench
	.venv/bin/ruff format --check src tests bench
	.venv/bin/mypy
	.venv/bin/lint-imports

bench: setup
	.venv/bin/python bench/overhead.py

# The documentation site (docs/, mkdocs.yml): strict, so a broken link or anchor, or a
# page missing from the navigation, fails the build.
docs: setup
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict
	@echo "docs: open site/index.html in a browser (e.g. xdg-open site/index.html)"
