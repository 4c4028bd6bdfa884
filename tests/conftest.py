"""What every suite shares."""

# Hypothesis is imported before any test starts a server: the first A2AServer to start in a
# process freezes the objects that exist then (gc.freeze(), see a2a_core.server), and a
# registration hypothesis makes on import (trio's random generator) checks its referrers
# with gc.get_referrers, which does not see frozen objects.
import hypothesis  # noqa: F401
