import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# papermill runs the chapters inside this process: repair nbclient's lost wake-up with Output
# widgets (see book/_ext/nbclient_wakeup.py), which otherwise stalls interact cells at random.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import nbclient_wakeup  # noqa: E402

nbclient_wakeup.apply()
