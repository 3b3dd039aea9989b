"""
The compiled kernels' test side: the robots they are checked on and the checks themselves.

Robots: every URDF shipped by example-robot-data (6.0.0, from the Python registry) that loads,
the bundled demo arm, and code-built trees using each joint type of the library (helical,
spherical, floating and planar included) with mimic joints. Each check compares the compiled
path with the NumPy reference.
"""

import os
import warnings
import zlib

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import compiled
from rbd_dynamics.dynamics import external_forces, rnea_reference
from rbd_dynamics.eom import (coriolis_matrix_reference, jacobian_reference,
                              mass_matrix_reference, regressor_reference)

from .robots import all_urdfs, robot_id

needs_numba = pytest.mark.skipif(not compiled.AVAILABLE, reason='numba is not installed')
needs_compiled_eom = pytest.mark.skipif(
    not compiled.EOM_AVAILABLE, reason='numba older than %d.%d runs the equations of motion in '
    'NumPy' % compiled.EOM_MIN_NUMBA)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf_file(path)


def code_built():
    """Build a tree with every joint type, a mimic chain and fixed children, without a URDF."""
    rng = np.random.default_rng(7)
    desc = rbd.Description('all_joints')

    def link(name):
        # I = tr(S) 1 - S for a second-moment matrix S: a physically consistent inertia
        a = rng.normal(scale=0.1, size=(3, 3))
        second_moment = a @ a.T
        desc.add_link(name, mass=rng.uniform(0.5, 2.0), com=rng.normal(scale=0.1, size=3),
                      inertia=np.trace(second_moment) * np.eye(3) - second_moment)

    link('base')
    parent = 'base'
    for i, (jtype, axis) in enumerate([('floating', (1, 0, 0)), ('revolute', (0, 1, 1)),
                                       ('helical', (1, 2, 0)), ('spherical', (0, 0, 1)),
                                       ('planar', (0.3, 0.2, 1.0)), ('prismatic', (1, -1, 0.5)),
                                       ('continuous', (0, 0, 1)), ('planar', (1, 0, 0))]):
        name = 'l%d' % i
        link(name)
        desc.add_joint('j%d' % i, jtype, parent, name, xyz=rng.normal(scale=0.2, size=3),
                       rpy=rng.uniform(-3, 3, size=3), axis=axis, pitch=0.05)
        parent = name
    link('tip')
    desc.add_joint('tip_fixed', 'fixed', parent, 'tip', xyz=(0.1, 0.0, 0.05), rpy=(0.3, 0, 0))
    link('m1')
    desc.add_joint('m1', 'revolute', 'l2', 'm1', xyz=(0, 0.1, 0), axis=(0, 0, 1),
                   mimic=('j1', -2.0, 0.3))
    link('m2')
    desc.add_joint('m2', 'prismatic', 'm1', 'm2', xyz=(0, 0.1, 0), axis=(1, 0, 0),
                   mimic=('m1', 0.5, -0.1))
    return rbd.Model.from_description(desc, gravity=(0.5, -1.0, -9.0))


MODELS = {'demo_arm': os.path.join(ROOT, 'urdf', 'demo_arm.urdf')}
MODELS.update((robot_id(path), path) for path in all_urdfs())


def seed(name):
    """
    Return a seed that does not change between runs.

    ``hash`` of a str does, with PYTHONHASHSEED.
    """
    return zlib.crc32(name.encode())


def random_q(model, rng, batch=()):
    q = rng.uniform(-1.5, 1.5, batch + (model.nq,))
    return q


def check_rnea(model, rng):
    nb_states = 4
    q = random_q(model, rng, (nb_states,))
    qd = rng.normal(size=(nb_states, model.nv))
    qdd = rng.normal(size=(nb_states, model.nv))
    links = list(rng.choice(model.link_names, size=min(3, len(model.link_names)),
                            replace=False))
    f_ext = {link: rng.normal(scale=5.0, size=(nb_states, 6)) for link in links}
    ref = rnea_reference(model, q, qd, qdd, external_forces(model, f_ext, (nb_states,)))
    ref_g = rnea_reference(model, q, 0 * qd, 0 * qdd, external_forces(model, f_ext, (nb_states,)))
    scale = max(1.0, np.abs(ref).max())
    # batch kernel
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, f_ext), ref, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(rbd.gravity_torques(model, q, f_ext), ref_g, rtol=0,
                               atol=1e-12 * scale)
    # single-state kernel, gravity-only mode included
    for s in range(nb_states):
        single = {link: w[s] for link, w in f_ext.items()}
        np.testing.assert_allclose(rbd.rnea(model, q[s], qd[s], qdd[s], single), ref[s], rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(rbd.gravity_torques(model, q[s], single), ref_g[s], rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(rbd.rnea(model, q[s], qd[s], qdd[s]),
                                   rnea_reference(model, q[s:s + 1], qd[s:s + 1],
                                                  qdd[s:s + 1])[0],
                                   rtol=0, atol=1e-12 * scale)
    # payload wrench: single-state kernel against the batched reference
    for link in links:
        batch = rbd.payload_wrench(model, link, q, qd, qdd)
        static = rbd.payload_wrench(model, link, q)
        for s in range(nb_states):
            np.testing.assert_allclose(rbd.payload_wrench(model, link, q[s], qd[s], qdd[s]),
                                       batch[s], rtol=0, atol=1e-12 * scale)
            np.testing.assert_allclose(rbd.payload_wrench(model, link, q[s]), static[s], rtol=0,
                                       atol=1e-12 * scale)


def check_eom(model, rng, states=2):
    """M, C, J (every link, both frames) and Y: batch and single-state kernels = reference."""
    q = random_q(model, rng, (states,))
    qd, qdd = rng.normal(size=(2, states, model.nv))
    inertia = model.runtime.inertia
    terms = [(rbd.mass_matrix, (q,), mass_matrix_reference(model, q, inertia)),
             (rbd.coriolis_matrix, (q, qd), coriolis_matrix_reference(model, q, qd, inertia)),
             (rbd.regressor, (q, qd, qdd), regressor_reference(model, q, qd, qdd))]
    for link in model.link_names:
        for frame in ('world', 'local'):
            terms.append((rbd.jacobian, (q, link, frame),
                          jacobian_reference(model, q, link, frame)))
    for function, args, ref in terms:
        what = '%s%s' % (function.__name__, args[1:] if function is rbd.jacobian else '')
        tol = 1e-12 * max(1.0, np.abs(ref).max())
        np.testing.assert_allclose(function(model, *args), ref, rtol=0, atol=tol, err_msg=what)
        for s in range(states):
            state = tuple(a[s] if isinstance(a, np.ndarray) else a for a in args)
            np.testing.assert_allclose(function(model, *state), ref[s], rtol=0, atol=tol,
                                       err_msg=what)


def watch_kernel(monkeypatch, module, name, answered=lambda result: result is not None):
    """
    Record, for every call of ``module.name`` (a kernel's caller), whether the kernel answered.

    Returns the list the calls append to: True where ``answered(result)`` (by default: the
    caller gave a result), False where not (the NumPy path took over).
    """
    on_kernel = []
    caller = getattr(module, name)

    def watched(*args):
        result = caller(*args)
        on_kernel.append(answered(result))
        return result

    monkeypatch.setattr(module, name, watched)
    return on_kernel
