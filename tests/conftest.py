"""Suite-wide settings: hypothesis profiles (CI is the default; THREADFIX_HYPOTHESIS=thorough for more)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("THREADFIX_HYPOTHESIS", "ci"))
