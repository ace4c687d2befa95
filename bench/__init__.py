"""gradcli's benchmark harness: `make bench` runs bench/run.py."""
