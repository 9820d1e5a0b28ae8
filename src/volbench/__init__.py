"""volbench: block-storage benchmarking toolkit driving fio."""

__version__ = "0.1.0"
