"""Benchmarks: Rivulet against a real redis-server in the same run. `python -m bench --help`."""
