"""
The kernels' algebra (:mod:`rbd_dynamics.compiled.algebra`) against the 6x6 spatial algebra.

Each function is compiled on its own here and called with random tuples; the references are
:mod:`rbd_dynamics.spatial`'s matrices (Featherstone's ``[n; f]`` order: angular first).
"""

import numpy as np
import pytest
from rbd_dynamics.spatial import axis_angle_to_matrix, cross_force, cross_motion, plux, \
    spatial_inertia
from support.compiled import needs_numba

pytestmark = needs_numba


@pytest.fixture(scope='module')
def algebra():
    from rbd_dynamics.compiled import algebra
    return algebra


def test_vector_and_matrix_products(algebra):
    rng = np.random.default_rng(1)
    for _ in range(5):
        A, B = rng.normal(size=(2, 3, 3))
        x, y = rng.normal(size=(2, 3))
        t = tuple
        np.testing.assert_allclose(algebra.cross(t(x), t(y)), np.cross(x, y), atol=1e-15)
        assert algebra.dot(t(x), t(y)) == pytest.approx(x @ y, abs=1e-15)
        np.testing.assert_allclose(algebra.rotate(t(A.ravel()), t(x)), A @ x, atol=1e-14)
        np.testing.assert_allclose(algebra.rotate_t(t(A.ravel()), t(x)), A.T @ x, atol=1e-14)
        np.testing.assert_allclose(algebra.matmul(t(A.ravel()), t(B.ravel())),
                                   (A @ B).ravel(), atol=1e-14)
        np.testing.assert_allclose(algebra.matmul_t(t(A.ravel()), t(B.ravel())),
                                   (A.T @ B).ravel(), atol=1e-14)
        np.testing.assert_allclose(algebra.dot6(t(x), t(y), t(y), t(x)), 2 * x @ y, atol=1e-14)


def test_kernels_take_no_fast_math_liberty_but_contraction(algebra):
    """
    Kernels may fuse a product and a sum (``contract``), nothing more of fast math.

    Any other flag (reordering, no NaN, no infinities) would allow the compiler to let a
    non-finite input give a finite torque, which the callers' checks would then miss.
    """
    from rbd_dynamics.compiled import eom, rnea
    for dispatcher in (algebra.rotate, rnea.rnea1, eom.jacobian1, eom.mass1):
        assert set(dispatcher.targetoptions['fastmath']) == {'contract'}, dispatcher


def test_spatial_transforms_and_cross_products(algebra):
    rng = np.random.default_rng(2)
    for _ in range(5):
        E = axis_angle_to_matrix(rng.normal(size=3) / 2.0, rng.uniform(-3, 3))
        r, w, v = rng.normal(size=(3, 3))
        n, f = rng.normal(size=(2, 3))
        X = plux(E, r)
        m, force = np.concatenate((w, v)), np.concatenate((n, f))
        Et = tuple(E.ravel())
        got = np.concatenate(algebra.motion_transform(Et, tuple(r), tuple(w), tuple(v)))
        np.testing.assert_allclose(got, X @ m, atol=1e-13)
        # the force transform's transpose carries a child's force to its parent: X^T f
        got = np.concatenate(algebra.transpose_force_transform(Et, tuple(r), tuple(n),
                                                               tuple(f)))
        np.testing.assert_allclose(got, X.T @ force, atol=1e-13)
        got = np.concatenate(algebra.motion_cross(tuple(w), tuple(v), tuple(n), tuple(f)))
        np.testing.assert_allclose(got, cross_motion(m, force), atol=1e-13)
        got = np.concatenate(algebra.force_cross(tuple(w), tuple(v), tuple(n), tuple(f)))
        np.testing.assert_allclose(got, cross_force(m, force), atol=1e-13)


def test_inertia_product_reads_the_columns_it_is_given(algebra):
    """One product for every inertia: the packed rows at any column offset."""
    rng = np.random.default_rng(3)
    mass, com = 2.5, rng.normal(size=3)
    a = rng.normal(size=(3, 3))
    I_com = a @ a.T + np.eye(3)
    inertia = spatial_inertia(mass, com, I_com)  # about the body origin, [n; f] order
    rot = inertia[:3, :3]
    row = np.concatenate(([mass], mass * com, rot[0], rot[1, 1:], rot[2, 2:]))
    packed = np.zeros((2, 20))
    packed[1, 7:17] = row
    w, v = rng.normal(size=(2, 3))
    got = np.concatenate(algebra.inertia_product(packed, 1, 7, tuple(w), tuple(v)))
    np.testing.assert_allclose(got, inertia @ np.concatenate((w, v)), atol=1e-12)
