"""Compiling the kernels before use (:mod:`rbd_dynamics.compiled.warm_up`), the public entry."""

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.eom import jacobian_reference, mass_matrix_reference
from support.compiled import load, MODELS, needs_compiled_eom, needs_numba, random_q, ROOT

pytestmark = needs_numba


@pytest.mark.slow
def test_without_numba_the_reference_path_gives_the_same_numbers(tmp_path):
    """RBD_DYNAMICS_DISABLE_JIT=1 (as where numba is missing): same torques, no packed model."""
    script = (
        'import json, sys, numpy as np, rbd_dynamics as rbd\n'
        'm = rbd.Model.from_urdf_file(sys.argv[1])\n'
        'q = np.linspace(-1, 1, m.nq); qd = np.linspace(1, -1, m.nv); qdd = np.ones(m.nv)\n'
        'print(json.dumps({"packed": m.packed is not None,\n'
        '    "tau": rbd.rnea(m, q, qd, qdd, {"ft_frame": [1, 2, 3, 0.1, 0.2, 0.3]}).tolist()}))\n')
    path = os.path.join(ROOT, 'urdf', 'demo_arm.urdf')
    env = dict(os.environ, RBD_DYNAMICS_DISABLE_JIT='1')
    out = subprocess.run([sys.executable, '-c', script, path], env=env, check=True,
                         capture_output=True, text=True, timeout=600)
    import json
    result = json.loads(out.stdout)
    assert result['packed'] is False
    model = load(path)
    q = np.linspace(-1, 1, model.nq)
    qd = np.linspace(1, -1, model.nv)
    expected = rbd.rnea(model, q, qd, np.ones(model.nv), {'ft_frame': [1, 2, 3, 0.1, 0.2, 0.3]})
    np.testing.assert_allclose(result['tau'], expected, rtol=0, atol=1e-12)


def test_compile_later():
    """
    A model built without the compiled path switches to it later.

    ``compiled=False`` gives the NumPy path until ``compile()``; the numbers do not change,
    and payload wrenches computed before switch to the compiled path too.
    """
    path = MODELS['demo_arm']
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf_file(path, compiled=False)
    assert model.packed is None
    rng = np.random.default_rng(15)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    f_ext = {'ft_frame': rng.normal(size=6)}
    before = (rbd.rnea(model, q, qd, qdd, f_ext), rbd.gravity_torques(model, q),
              rbd.payload_wrench(model, 'ft_frame', q, qd, qdd))
    assert model.runtime.beyond['ft_frame'].packed is None
    assert model.compile() and model.packed is not None
    assert model.compile()  # once is enough
    after = (rbd.rnea(model, q, qd, qdd, f_ext), rbd.gravity_torques(model, q),
             rbd.payload_wrench(model, 'ft_frame', q, qd, qdd))
    assert model.runtime.beyond['ft_frame'].packed is not None
    for a, b in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_compile_readies_the_batch_kernels(code_model):
    """A compiled model's batch kernel is loaded before any batch."""
    from rbd_dynamics.compiled import rnea
    assert code_model.packed is not None
    assert rnea.serial_batch.signatures


@needs_compiled_eom
def test_equations_of_motion_compile_on_first_use(code_model):
    """
    The equations of motion's entry points start as stubs that compile them, then call them.

    Once compiled in the process, every packed model (a payload's copy too) takes the kernels
    themselves.
    """
    packed = code_model.packed
    q = random_q(code_model, np.random.default_rng(2))
    from rbd_dynamics.compiled import eom, layout
    from rbd_dynamics.compiled import warm_up as warm_up_module
    stub = warm_up_module.CompileFirst(packed, 'mass1')
    M = np.empty((code_model.nv, code_model.nv))
    assert stub(packed.blob, q, M) == layout.OK
    np.testing.assert_allclose(M, mass_matrix_reference(code_model, q[None],
                                                        code_model.runtime.inertia)[0],
                               rtol=0, atol=1e-12)
    from rbd_dynamics import compiled
    assert compiled.prepare(code_model, compiled.KERNELS[1:])
    for name in layout.EOM_ENTRIES:
        assert warm_up_module.ENTRY[name] is not None
        assert getattr(packed, name) is warm_up_module.ENTRY[name]
        copy = packed.with_inertia(code_model.inertia)
        assert getattr(copy, name) is warm_up_module.ENTRY[name]
    assert eom.eom_range.signatures
    # each entry point compiled once, for its own signature: the batch kernel and the
    # task-space law call those versions, they compile none of their own
    from rbd_dynamics.compiled import frames, task
    for kernel in (eom.mass1, eom.coriolis1, eom.jacobian1, eom.regressor1, frames.pose1,
                   frames.acceleration1, task.task1):
        assert len(kernel.signatures) == 1, (kernel.__name__, kernel.signatures)


def test_a_payload_swaps_one_runtime_state():
    """
    A payload change builds a new runtime state and leaves the old one as it was.

    The packed model of each state holds that state's inertias, so a reader holding either
    computes with one consistent set.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf_file(MODELS['demo_arm'])
    before = model.runtime
    inertia_before = before.inertia.copy()
    model.set_payload('ft_frame', 1.5, (0.0, 0.0, 0.1))
    after = model.runtime
    assert after is not before
    assert before.payloads == {} and set(after.payloads) == {'ft_frame'}
    assert model.inertia is after.inertia and model.packed is after.packed
    np.testing.assert_array_equal(before.inertia, inertia_before)
    assert not np.array_equal(after.inertia, inertia_before)
    for state in (before, after):
        assert state.packed.source_inertia is state.inertia
        np.testing.assert_allclose(state.packed.inertia,
                                   state.packed.pack_inertia(state.inertia), rtol=0, atol=0)
    with pytest.raises(TypeError):
        after.payloads['ft_frame'] = None
    model.clear_payloads()
    assert model.payloads == {} and model.packed.source_inertia is model.inertia
    np.testing.assert_array_equal(model.inertia, inertia_before)


@needs_compiled_eom
def test_single_states_take_the_entry_points(monkeypatch):
    """
    A single state of float64 vectors never takes the general path.

    Both paths give the same numbers, so only this tells a fast path that silently stopped
    being taken (a wrong status constant, a missed code lookup) from a working one.
    """
    from rbd_dynamics import crba, jacobians
    model = load(MODELS['demo_arm'])
    q = np.random.default_rng(5).uniform(-1, 1, model.nq)
    rbd.mass_matrix(model, q)  # the equations of motion compile at their first call
    link = model.link_names[-1]
    expected = {frame: jacobian_reference(model, q[None], link, frame)[0]
                for frame in ('world', 'local')}

    def general(*args):
        raise AssertionError('a single state took the general path')

    monkeypatch.setattr(crba, 'as_batch', general)
    monkeypatch.setattr(jacobians, 'as_batch', general)
    M = rbd.mass_matrix(model, q)
    assert M.shape == (model.nv, model.nv)
    for frame in ('world', 'local'):
        np.testing.assert_allclose(rbd.jacobian(model, q, link, frame), expected[frame],
                                   rtol=0, atol=1e-12)
    np.testing.assert_allclose(rbd.jacobian(model, q, link), expected['world'], rtol=0,
                               atol=1e-12)


@needs_compiled_eom
def test_prepare_and_ready_are_the_public_entry():
    """
    ``prepare`` builds what it is asked for, ``ready`` says whether a call would wait.

    In a fresh process (the kernels are built once per process): a compiled model's Jacobian is
    not ready until prepared; a model on the NumPy path is always ready; unknown names are
    refused.
    """
    script = (
        'from rbd_dynamics import compiled\n'
        'import numpy as np, rbd_dynamics as rbd\n'
        'from rbd_dynamics.resources import demo_urdf_path\n'
        'plain = rbd.Model.from_urdf_file(demo_urdf_path(), compiled=False)\n'
        'print("numpy path ready:", compiled.ready(plain, ("rnea", "jacobian")))\n'
        'm = rbd.Model.from_urdf_file(demo_urdf_path())\n'
        'print("before:", compiled.ready(m, "jacobian"), compiled.ready(m, "rnea"))\n'
        'steps = []\n'
        'ok = compiled.prepare(m, ("jacobian", "mass_matrix"), lambda *a: steps.append(a))\n'
        'print("prepared:", ok, compiled.ready(m, ("jacobian", "mass_matrix")),\n'
        '      compiled.ready(m, "regressor"))\n'
        'print("steps:", steps)\n'
        'try:\n'
        '    compiled.prepare(m, "inverse")\n'
        'except ValueError as err:\n'
        '    print("refused:", err)\n')
    out = _fresh_process(script)
    assert 'numpy path ready: True' in out
    assert 'before: False True' in out
    assert 'prepared: True True False' in out
    assert "steps: [('jacobian1', 0, 2), ('mass1', 1, 2)]" in out
    assert 'refused: unknown kernels inverse' in out


def test_prepare_compiles_a_model_built_without_it():
    from rbd_dynamics import compiled
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf_file(MODELS['demo_arm'], compiled=False)
    assert model.packed is None
    assert compiled.prepare(model, 'rnea') and model.packed is not None
    assert compiled.steps('rnea') == ('rnea1', 'gravity1', 'body_force1', 'batch')
    # (a numba older than 0.57 runs the equations of motion in NumPy: nothing to build there)
    assert compiled.steps(('link_pose', 'link_acceleration')) == (
        ('pose1', 'acceleration1') if compiled.EOM_AVAILABLE else ())


def test_two_threads_compile_at_once():
    """
    Two models compiled at the same moment on two threads both get the compiled path.

    In a fresh process (the kernels are built once per process): the second thread must not
    find the first one's entry points frozen half way and fall back to the NumPy path.
    """
    script = (
        'import threading\n'
        'import rbd_dynamics as rbd\n'
        'from rbd_dynamics.resources import demo_urdf_path\n'
        'models = [rbd.Model.from_urdf_file(demo_urdf_path(), compiled=False) for _ in "ab"]\n'
        'done = []\n'
        'threads = [threading.Thread(target=lambda m=m: done.append(m.compile()))\n'
        '           for m in models]\n'
        'for t in threads:\n'
        '    t.start()\n'
        'for t in threads:\n'
        '    t.join()\n'
        'print("compiled:", done, [m.packed is not None for m in models])\n')
    out = _fresh_process(script)
    assert 'compiled: [True, True] [True, True]' in out, out


def _fresh_process(script):
    """
    Run ``script`` in a fresh interpreter (the kernels are built once per process).

    From the temporary directory: from the checkout, ``-c`` would import the package of the
    source tree, whose kernels ``precompile`` did not cache, instead of the installed one.
    """
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          timeout=600, cwd=tempfile.gettempdir())
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
