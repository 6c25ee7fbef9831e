# SPDX-License-Identifier: MIT
"""Version of the ditto package: meson's project(version:), the one place
the version is written.

An installed package carries ``_build_info.py``, written by its installer
(bindings/python/meson.build or setup.py) from that version. A source
checkout has none and reads ../../../meson.build. setup.py loads this file
on its own (not as part of the package) to read the version the same way.
"""

import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
# bindings/python/ditto -> the checkout's root
SOURCE_ROOT = os.path.normpath(os.path.join(_HERE, '..', '..', '..'))


def from_meson_build(path):
    """The version: field of project() in the meson.build at path."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r"\bproject\((?:[^()]|\([^()]*\))*?\bversion\s*:\s*'([^']+)'", text)
    if not m:
        raise RuntimeError('%s: no version in project()' % path)
    return m.group(1)


try:
    from ._build_info import VERSION as __version__
except ImportError:
    __version__ = from_meson_build(os.path.join(SOURCE_ROOT, 'meson.build'))
