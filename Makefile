# The two commands of the README, and the checks CI runs beside the tests.
.PHONY: setup quick test lint bench

setup:
	scripts/setup

quick: setup
	.venv/bin/volbench run quick

test:
	scripts/test

lint: setup
	.venv/bin/ruff check src tests bench
	.venv/bin/ruff format --check src tests bench
	.venv/bin/mypy

bench: setup
	.venv/bin/python bench/overhead.py
