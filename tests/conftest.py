"""tests/ on sys.path, so that the shared helper modules here (blobs_fixture.py,
training_reference.py) import by name from the tests of every folder."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
