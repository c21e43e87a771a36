"""Shared test settings.

Property-based tests draw random loop nests and schedules. On CI (``CI`` set in the environment) the
draws are derandomized, so a run is reproducible and a failure can be replayed by rerunning; locally the
draws stay random so that new cases keep being explored.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
