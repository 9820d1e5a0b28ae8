"""``python -m volbench``: the same as the ``volbench`` command."""

from volbench.cli.main import main

if __name__ == "__main__":
    main()
