"""The batch drivers (:mod:`rbd_dynamics.compiled.batch`): large batches on threads."""

import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.compiled import batch as drivers
from support.compiled import needs_compiled_eom, needs_numba, random_q

pytestmark = needs_numba


def test_large_batches_run_on_threads(code_model, monkeypatch):
    """
    Large batches run on threads and equal the loop.

    A batch of PARALLEL_BATCH states or more runs in NUMBA_NUM_THREADS ranges on as many
    threads (two here) and equals the loop of single calls, with wrenches, for rnea
    and gravity torques.
    """
    model = code_model
    calls = []
    kernel = drivers.serial_batch

    def spy(blob, *args):
        calls.append((threading.current_thread().name, args[-2:]))
        return kernel(blob, *args)

    monkeypatch.setattr(drivers, 'serial_batch', spy)
    import numba
    monkeypatch.setattr(numba.config, 'NUMBA_NUM_THREADS', 2)  # whatever the machine has
    rng = np.random.default_rng(16)
    batch = drivers.PARALLEL_BATCH + 45  # not a multiple of the number of threads
    q = random_q(model, rng, (batch,))
    qd, qdd = rng.normal(size=(2, batch, model.nv))
    links = ['l3', 'tip', 'base']  # a moving body, a fixed child, the base
    f_ext = {link: rng.normal(scale=5.0, size=(batch, 6)) for link in links}
    tau = rbd.rnea(model, q, qd, qdd, f_ext)
    tau_g = rbd.gravity_torques(model, q, f_ext)
    half = (batch + 1) // 2
    assert sorted(args for _, args in calls) == [(0, half)] * 2 + [(half, batch)] * 2, calls
    assert len({thread for thread, _ in calls}) == 2
    for s in range(batch):
        single = {link: wrench[s] for link, wrench in f_ext.items()}
        np.testing.assert_allclose(tau[s], rbd.rnea(model, q[s], qd[s], qdd[s], single),
                                   rtol=0, atol=1e-12 * max(1.0, np.abs(tau[s]).max()))
        np.testing.assert_allclose(tau_g[s], rbd.gravity_torques(model, q[s], single),
                                   rtol=0, atol=1e-12 * max(1.0, np.abs(tau_g[s]).max()))
    # a batch just below the threshold runs in one range, on the calling thread
    del calls[:]
    rbd.rnea(model, q[:drivers.PARALLEL_BATCH - 1], qd[:drivers.PARALLEL_BATCH - 1],
             qdd[:drivers.PARALLEL_BATCH - 1])
    assert calls == [(threading.current_thread().name, (0, drivers.PARALLEL_BATCH - 1))]


@needs_compiled_eom
def test_large_equations_of_motion_batches_run_on_threads(code_model, monkeypatch):
    """M, C, J and Y of a large batch: on two threads, equal to single calls, NaN in its row."""
    model = code_model
    calls = []
    kernel = drivers.eom_range

    def spy(blob, *args):
        calls.append((threading.current_thread().name, args[-2:]))
        return kernel(blob, *args)

    monkeypatch.setattr(drivers, 'eom_range', spy)
    import numba
    monkeypatch.setattr(numba.config, 'NUMBA_NUM_THREADS', 2)
    rng = np.random.default_rng(17)
    batch = drivers.PARALLEL_BATCH + 45
    q = random_q(model, rng, (batch,))
    q[7, 7] = np.nan  # the angle of j1, the revolute joint under the floating one
    qd, qdd = rng.normal(size=(2, batch, model.nv))
    results = [(rbd.mass_matrix, (q,)), (rbd.coriolis_matrix, (q, qd)),
               (rbd.jacobian, (q, 'tip', 'local')), (rbd.regressor, (q, qd, qdd))]
    results = [(function, args, function(model, *args)) for function, args in results]
    # each batch in two ranges, one on the calling thread and one on another
    half = (batch + 1) // 2
    assert sorted(args for _, args in calls) == [(0, half)] * 4 + [(half, batch)] * 4, calls
    assert len({thread for thread, _ in calls}) == 2
    for function, args, many in results:
        assert np.isnan(many[7]).any() and np.isfinite(np.delete(many, 7, axis=0)).all()
        for s in range(0, batch, 37):
            state = tuple(a[s] if isinstance(a, np.ndarray) else a for a in args)
            np.testing.assert_array_equal(many[s], function(model, *state))


@pytest.mark.slow
def test_batches_of_any_input_kind_after_a_second_warm_up(tmp_path):
    """
    Batch kernels take any input kind after a second warm-up.

    Batch kernels compiled in a process whose single-state kernels came from numba's disk
    cache, then frozen by a second model's warm-up, still take batches whose inputs are
    broadcast (read-only) or not: every batch reaches them as one array type.
    """
    # the package as a process started from elsewhere imports it: in a colcon workspace the
    # install space's, whose kernels are cached elsewhere than those of the copy this test
    # process may have imported (the source tree's)
    probe = ('from numba.core.caching import _CacheLocator\n'
             'from rbd_dynamics import compiled\n'
             'print(compiled.cache_directory())\n'
             'print(_CacheLocator.get_suitable_cache_subpath(compiled.rnea.__file__))\n')
    found = subprocess.run([sys.executable, '-c', probe], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600)
    assert found.returncode == 0, found.stderr[-2000:]
    source, subpath = found.stdout.splitlines()[-2:]
    # numba's cache of the kernels without the batch kernels', in a directory of its own
    target = tmp_path / subpath
    target.mkdir(parents=True)
    cached = [name for name in (os.listdir(source) if os.path.isdir(source) else ())
              if name.endswith(('.nbi', '.nbc')) and 'batch' not in name
              and 'eom_range' not in name]
    for name in cached:
        shutil.copy2(os.path.join(source, name), target / name)
    script = (
        'import numpy as np\n'
        'import rbd_dynamics as rbd\n'
        'from rbd_dynamics import compiled\n'
        'from rbd_dynamics.resources import demo_urdf_path\n'
        'm = rbd.Model.from_urdf_file(demo_urdf_path())\n'
        'Q = np.tile(np.linspace(-1, 1, m.nq), (300, 1)); z = np.zeros(m.nv)\n'
        'a = rbd.rnea(m, Q, z, z)\n'
        'm2 = rbd.Model.from_urdf_file(demo_urdf_path())\n'
        'Z = np.zeros((300, m.nv))\n'
        'b = rbd.rnea(m2, Q, Z, Z)\n'
        'c = rbd.gravity_torques(m2, np.broadcast_to(Q[0], Q.shape))\n'
        'assert np.abs(a - b).max() == 0 and np.abs(a - c).max() < 1e-12\n'
        'print("compiled here:", " ".join(compiled.compiled_here()))\n')
    # from the temporary directory: from the checkout, -c would import the source tree, whose
    # kernels are cached elsewhere
    result = subprocess.run([sys.executable, '-c', script], cwd=tmp_path, capture_output=True,
                            env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path)), text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    here = result.stdout.split('compiled here:')[1].split()
    assert 'serial_batch' in here, result.stdout
    if any(name.startswith('rnea.rnea1-') for name in cached):
        assert 'rnea1' not in here and 'gravity1' not in here, result.stdout
