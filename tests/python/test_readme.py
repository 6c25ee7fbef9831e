# SPDX-License-Identifier: MIT
"""The README's Python examples run as written. The CPU example profiles a
live pid; here its lines after `cpu = ...` run on a cpu entry of the sample
model, so a call the binding does not have (cpu.branches.buckets() once
raised TypeError: buckets is a property) fails this test."""

import contextlib
import io
import os
import re

import ditto

README = os.path.join(os.path.dirname(__file__), '..', '..', 'README.md')


def python_blocks():
    with open(README, encoding='utf-8') as f:
        return re.findall(r'```python\n(.*?)```', f.read(), re.S)


def cpu_example_lines():
    """The lines of the README's profile_cpu example that use `cpu`."""
    for block in python_blocks():
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith('cpu = ditto.profile_cpu('):
                return lines[i + 1:]
    raise AssertionError('README has no `cpu = ditto.profile_cpu(...)` example')


def test_readme_cpu_example_runs_on_a_model_cpu_entry(sample):
    cpu = sample.service(0).cpu[0]
    lines = cpu_example_lines()
    assert lines, 'nothing uses cpu after the profile_cpu call'
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec('\n'.join(lines), {'ditto': ditto, 'cpu': cpu})  # noqa: S102 (README text)
    assert out.getvalue().strip()


def test_package_version_is_the_librarys():
    # Both come from meson's project(version:).
    assert ditto.__version__ == ditto.version()


def test_readme_status_line_names_the_project_version():
    # It said 0.4.0 and "the tuner is empty" a release after the tuner landed.
    with open(README, encoding='utf-8') as f:
        m = re.search(r'\*\*Status \(([^)]*)\):\*\*', f.read())
    assert m and m.group(1) == ditto.__version__, m and m.group(1)
