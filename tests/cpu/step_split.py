# SPDX-License-Identifier: MIT
"""One stepping mode per build for the longest CPU-window tests (marker
one_mode_per_split; tests/cpu and tests/profile): the plain build runs
them in the mode DITTO_SPLIT_STEP_MODE names (tests/python/meson.build),
the sanitized build in the other, so CI's two splits together run both."""

import os

import pytest

MARKER = ('one_mode_per_split: a long test run in one stepping mode per build '
          '(DITTO_SPLIT_STEP_MODE): CI runs both builds')


def split_skip(request, mode):
    """Skips a one_mode_per_split test in the mode its build leaves to the other."""
    split = os.environ.get('DITTO_SPLIT_STEP_MODE')
    if split and mode != split and request.node.get_closest_marker('one_mode_per_split'):
        pytest.skip('%s: run in the other build of CI (DITTO_SPLIT_STEP_MODE=%s)' % (mode, split))
