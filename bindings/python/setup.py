# SPDX-License-Identifier: MIT
"""Build hook of pyproject.toml: the package's version is meson's
project(version:), read by ditto/_version.py from the checkout's
meson.build, and written into the built package as ditto/_build_info.py so
the installed package needs no checkout. The library itself is not built
here: the package finds an installed libditto.so.0 through the dynamic
loader, or $DITTO_LIBRARY."""

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    # Loaded as a lone file: importing the package would load libditto.
    spec = importlib.util.spec_from_file_location(
        '_ditto_version', os.path.join(HERE, 'ditto', '_version.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.__version__


VERSION = _version()


class BuildPyWithInfo(build_py):
    def run(self):
        super().run()
        path = os.path.join(self.build_lib, 'ditto', '_build_info.py')
        with open(path, 'w', encoding='utf-8') as f:
            f.write('# Written by bindings/python/setup.py.\n'
                    'VERSION = %r\n'
                    '# No LIBDIR: libditto.so.0 comes from the dynamic loader.\n' % VERSION)


setup(version=VERSION, cmdclass={'build_py': BuildPyWithInfo})
