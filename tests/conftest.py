"""Shared pytest configuration: hypothesis profiles.

``ci`` (the default) keeps the property-based tests to a few hundred examples in total, with a
fixed seed (``derandomize``), no example database and no per-example deadline, so that every
run tests the same examples and a slow machine can never make a run flaky. ``long`` explores
far more examples with random seeds::

    python -m pytest --hypothesis-profile=long tests/test_fuzz.py
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,  # the same examples on every machine: nothing replayed from local runs
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# hypothesis' pytest plugin loads the profile named by --hypothesis-profile after this runs
settings.load_profile("ci")
