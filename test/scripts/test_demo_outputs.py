"""
The demos write only under their ``--out``: never into the checkout (its tracked plots).

The task-space demo, in one process (the library's law against MuJoCo, no ROS), for a short
scene: its plot and log land in ``--out``, and nothing in the checkout changes.
"""

import os
import subprocess
import sys

import pytest

pytest.importorskip('mujoco')
pytest.importorskip('matplotlib')

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _snapshot(root):
    """
    Return ``{path: (size, mtime)}`` of the checkout's top-level files and of ``docs/``.

    (Where a demo's outputs used to land.) Hidden files are left out: other work beside this
    test writes there, as CI's background builds do their ``.ci-*.log``, and so do build
    folders and caches elsewhere in the checkout.
    """
    out = {}
    paths = [os.path.join(root, name) for name in os.listdir(root) if not name.startswith('.')]
    for folder, _, files in os.walk(os.path.join(root, 'docs')):
        paths += [os.path.join(folder, name) for name in files]
    for path in paths:
        if os.path.isfile(path):
            stat = os.stat(path)
            out[path] = (stat.st_size, stat.st_mtime_ns)
    return out


def test_the_task_demo_writes_its_plot_under_out_only(tmp_path):
    script = os.path.join(REPO, 'scripts', 'task_demo.py')
    if not os.path.exists(script):
        pytest.skip('not a checkout (no scripts/)')
    before = _snapshot(REPO)
    out = tmp_path / 'out'
    done = subprocess.run([sys.executable, script, '--in-process', '--periods', '0.2',
                           '--out', str(out)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(os.listdir(out)) == ['processes.log', 'task_space.png'], os.listdir(out)
    assert 'plot: %s' % (out / 'task_space.png') in done.stdout
    assert sorted(os.listdir(tmp_path)) == ['out']
    assert _snapshot(REPO) == before  # docs/task_space.png and the rest untouched
