"""Test-suite settings: hypothesis runs the same examples on every CI run."""

import os

from hypothesis import settings

# Locally each run explores new examples; CI (which sets CI=true) replays a
# fixed set, so that its verdict depends on the change alone.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
