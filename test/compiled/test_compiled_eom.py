"""
The equations of motion's kernels (:mod:`rbd_dynamics.compiled.eom`) equal the NumPy reference.

Mass and Coriolis matrices, the Jacobian of every link in both frames and the regressor, single
states and batches, on every robot of :mod:`support.compiled` and every joint type; an entry
point refuses arrays of other sizes without writing.
"""

import os

import numpy as np
import pytest
import rbd_dynamics as rbd
from support.compiled import check_eom, load, MODELS, needs_compiled_eom, needs_numba, \
    random_q, seed
from support.robots import BROKEN, robots_directory

pytestmark = [needs_numba, needs_compiled_eom]


@pytest.mark.parametrize('name', sorted(MODELS))
def test_compiled_equals_reference_on_urdf(name):
    path = MODELS[name]
    root = robots_directory()
    if root is not None and os.path.relpath(path, root).replace(os.sep, '/') in BROKEN:
        return  # refused on loading (test_compiled_rnea)
    model = load(path)
    if model.nv == 0:  # nothing moves: empty results, the compiled path still answers
        assert rbd.mass_matrix(model, []).shape == (0, 0)
        assert rbd.regressor(model, [], [], []).shape == (0, 10 * model.nb)
        assert rbd.jacobian(model, [], model.link_names[-1]).shape == (6, 0)
        return
    check_eom(model, np.random.default_rng(seed(name) + 1))


def test_compiled_equals_reference_on_every_joint_type(code_model):
    check_eom(code_model, np.random.default_rng(3), states=4)


def test_entry_points_refuse_other_sizes(code_model):
    from rbd_dynamics.compiled import eom, layout
    packed = code_model.packed
    q = random_q(code_model, np.random.default_rng(8))
    rbd.mass_matrix(code_model, q)  # the kernels compile at first use
    v = np.zeros(code_model.nv)
    nv, nb = code_model.nv, code_model.nb
    calls = [(eom.mass1, (q,), (nv, nv + 1)), (eom.mass1, (q[:-1],), (nv, nv)),
             (eom.coriolis1, (q, v[:-1]), (nv, nv)),
             (eom.jacobian1, (q, 2 * len(code_model.link_names)), (6, nv)),
             (eom.jacobian1, (q, 0), (5, nv)),
             (eom.regressor1, (q, v, v), (nv, 10 * nb - 1))]
    for kernel, args, shape in calls:
        out = np.full(shape, 7.0)
        assert kernel(packed.blob, *args, out) == layout.BAD_SIZES, kernel
        assert np.all(out == 7.0)  # nothing written
