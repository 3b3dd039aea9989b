"""
The equations of motion's kernels (:mod:`rbd_dynamics.compiled.eom`) equal the NumPy reference.

Mass and Coriolis matrices, the Jacobian of every link in both frames and the regressor, single
states and batches, on every robot of :mod:`support.compiled` and every joint type; an entry
point refuses arrays of other sizes without writing, and the Jacobian's gate sends every other
kind of input the general way.
"""

import os
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.eom import jacobian_reference
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


class _Vector:
    """A float64 vector that is no NumPy array: the dtype and the size of one, and its data."""

    ndim = 1
    dtype = np.dtype(np.float64)

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_the_jacobian_gate_sends_other_inputs_the_general_way():
    """
    Only float64 NumPy vectors reach the Jacobian's entry point.

    Its gate tests q's dtype and dimensions, not its class: a float64 vector goes to the entry
    point, and so does an object with that dtype and one dimension that is no array (refused
    by the entry point before it reads anything), which then takes the general path like
    lists, other dtypes, strided, read-only and masked arrays: all give the reference's
    answer. Any other failure of the entry point with an array is raised. A scalar and an
    unknown link or frame give the general path's errors.
    """
    model = load(MODELS['demo_arm'])
    rng = np.random.default_rng(12)
    q = rng.uniform(-1, 1, model.nq)
    link = model.link_names[-1]
    for first in (q, list(q)):  # (the entry point and the general path compiled)
        rbd.jacobian(model, first, link)
    packed = model.runtime.eom_packed
    entry, calls = packed.jacobian1, []

    def counted(*args):
        calls.append(type(args[1]))
        return entry(*args)

    packed.jacobian1 = counted
    try:
        rbd.jacobian(model, q, link)
        rbd.jacobian(model, list(q), link)
        rbd.jacobian(model, _Vector(q), link)
        assert calls == [np.ndarray, _Vector]  # the float64 vector and the no-array reach it
        assert model.runtime.eom_packed is packed

        def broken(*args):
            raise TypeError('an entry point that fails')

        packed.jacobian1 = broken  # a failure with an array is not taken for a refusal
        with pytest.raises(TypeError, match='an entry point that fails'):
            rbd.jacobian(model, q, link)
    finally:
        packed.jacobian1 = entry
    strided = np.zeros((model.nq, 2))
    strided[:, 0] = q
    readonly = q.copy()
    readonly.setflags(write=False)
    variants = (q, _Vector(q), list(q), tuple(q), q.astype('>f8'), strided[:, 0], readonly,
                np.ma.masked_array(q, mask=np.zeros(model.nq, dtype=bool)), q.astype(object))
    for frame in ('world', 'local'):
        expected = jacobian_reference(model, q[None], link, frame)[0]
        for variant in variants:
            np.testing.assert_allclose(rbd.jacobian(model, variant, link, frame=frame),
                                       expected, rtol=0, atol=1e-12,
                                       err_msg=type(variant).__name__)
        single = q.astype(np.float32)
        np.testing.assert_allclose(
            rbd.jacobian(model, single, link, frame=frame),
            jacobian_reference(model, single.astype(float)[None], link, frame)[0], rtol=0,
            atol=1e-12)
        with warnings.catch_warnings():  # complex: the real part, with NumPy's warning
            warnings.simplefilter('ignore')
            got = rbd.jacobian(model, (q + 0.5j).astype(np.complex128), link, frame=frame)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        assert rbd.jacobian(model, q[None], link, frame=frame).shape == (1, 6, model.nv)
    with pytest.raises(ValueError, match='q has a scalar'):
        rbd.jacobian(model, 0.5, link)
    with pytest.raises(ValueError, match='q has %d entries' % (model.nq - 1)):
        rbd.jacobian(model, _Vector(q[:-1]), link)
    with pytest.raises(KeyError, match="unknown link 'no_such_link'"):
        rbd.jacobian(model, q, 'no_such_link')
    with pytest.raises(ValueError, match="frame 'body' is not one of"):
        rbd.jacobian(model, q, link, frame='body')
    with pytest.raises(ValueError, match='frame .* is not one of'):
        rbd.jacobian(model, q, link, frame=['world'])
