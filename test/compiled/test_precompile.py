"""
Start-up: the one-shot command without numba, precompile, and the compilation's progress.

``python -m rbd_dynamics ROBOT --q ...`` computes one state on the NumPy path and must not pay
for importing numba; ``python -m rbd_dynamics precompile`` fills numba's cache with every kernel
the node and the tools use; :class:`~rbd_dynamics.precompile.CompileProgress` says what a first
compilation is doing once it takes long enough to be noticed.
"""

import glob
import io
import os
import subprocess
import sys
import tempfile
import time

import pytest
from rbd_dynamics.precompile import CompileProgress, COMPILING

#: Longer than any compilation (numba 0.55 on a slow machine compiles for minutes): the tests
#: wait for the process, they do not time it.
DEADLINE = 900


def run(args, **kwargs):
    """
    Run the interpreter with ``args``, from the temporary directory.

    From the checkout, ``-m`` and ``-c`` would import the package of the source tree, whose
    kernels live in a cache of their own, instead of the installed one.
    """
    kwargs.setdefault('cwd', tempfile.gettempdir())
    return subprocess.run([sys.executable] + args, capture_output=True, text=True,
                          timeout=DEADLINE, **kwargs)


def test_the_one_state_command_and_the_package_import_no_numba():
    script = ('import sys\nimport rbd_dynamics\nfrom rbd_dynamics.__main__ import main\n'
              'assert main(["--q"] + ["0.1"] * 8) == 0\n'
              'print("numba imported:", "numba" in sys.modules)\n')
    done = run(['-c', script])
    assert done.returncode == 0, done.stderr
    assert 'joint1' in done.stdout and 'numba imported: False' in done.stdout, done.stdout


@pytest.mark.slow
def test_precompile_fills_the_cache_with_every_kernel():
    pytest.importorskip('numba')
    done = run(['-m', 'rbd_dynamics', 'precompile'])
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'not side by side' not in done.stderr, done.stderr  # the processes missed none
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith('kernels ready in ') and 'numba cache: ' in last, done.stdout
    directory = last.split('numba cache: ', 1)[1]
    assert os.path.isdir(directory), directory
    indexed = {os.path.basename(path).split('-')[0].split('.')[-1]
               for path in glob.glob(os.path.join(directory, '*.nbi'))}
    from rbd_dynamics import compiled
    eom = compiled.EOM_AVAILABLE  # (an older numba runs the equations of motion in NumPy)
    kernels = ('rnea1', 'gravity1', 'body_force1', 'serial_batch') + (
        ('mass1', 'coriolis1', 'jacobian1', 'regressor1', 'pose1', 'acceleration1', 'task1',
         'floating1', 'eom_range') if eom else ())
    for kernel in kernels:
        assert kernel in indexed, (kernel, sorted(indexed))
    # The processes precompile shares the work out among left nothing out: a fresh process
    # loads every kernel and compiles none.
    script = ('from rbd_dynamics import compiled\n'
              'from rbd_dynamics.model import Model\n'
              'from rbd_dynamics.resources import demo_urdf_path\n'
              'model = Model.from_urdf_file(demo_urdf_path(), compiled=False)\n'
              'assert compiled.prepare(model, compiled.KERNELS) or not compiled.EOM_AVAILABLE\n'
              'print("compiled:", compiled.compiled_here())\n')
    again = run(['-c', script])
    assert again.returncode == 0, again.stderr
    assert 'compiled: []' in again.stdout, again.stdout


def test_precompile_without_numba_says_why():
    env = dict(os.environ, RBD_DYNAMICS_DISABLE_JIT='1')
    done = run(['-m', 'rbd_dynamics', 'precompile'], env=env)
    assert done.returncode == 1 and 'RBD_DYNAMICS_DISABLE_JIT' in done.stderr, done.stderr
    assert 'Traceback' not in done.stderr


def test_progress_is_shown_once_the_delay_has_passed():
    stream = io.StringIO()
    progress = CompileProgress(stream, delay=0.0)
    progress('rnea1', 0, 5)
    progress('gravity1', 1, 5)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == COMPILING
    assert lines[1].startswith('  rnea1 (1 of 5)') and lines[2].startswith('  gravity1 (2 of 5)')


def test_a_quick_load_shows_nothing():
    stream = io.StringIO()
    progress = CompileProgress(stream, delay=60.0)
    progress('rnea1', 0, 5)
    progress.finish()
    assert stream.getvalue() == ''


def test_many_quick_steps_show_nothing():
    """Kernels loaded from the cache one after another: each step quick, all of them not."""
    stream = io.StringIO()
    progress = CompileProgress(stream, delay=1.0)
    for k, name in enumerate(('rnea1', 'gravity1', 'body_force1', 'batch', 'mass1')):
        progress(name, k, 5)
        time.sleep(0.3)  # 1.5 s in all, no step near the delay
    progress.finish()
    assert stream.getvalue() == ''
