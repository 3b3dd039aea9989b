"""
Matrices with their columns scaled to unit norm (``rbd_dynamics.numerics``).

- the condition number does not depend on the columns' units, and is infinite with a zero
  column or none;
- least squares on the scaled columns is least squares in the matrix's own units, and gives a
  zero column's parameter 0.
"""

import math

import numpy as np
from rbd_dynamics.numerics import column_norms, scaled_condition, scaled_lstsq

RNG = np.random.default_rng(7)


def test_column_norms_take_a_zero_column_as_one():
    A = np.array([[3.0, 0.0, 1.0], [4.0, 0.0, 0.0]])
    np.testing.assert_array_equal(column_norms(A), [5.0, 1.0, 1.0])


def test_scaled_condition_ignores_units_and_sees_zero_columns():
    A = RNG.normal(size=(50, 4))
    units = np.array([1e-6, 1.0, 1e3, 1e9])
    assert math.isclose(scaled_condition(A * units), scaled_condition(A), rel_tol=1e-9)
    assert scaled_condition(A) < 10.0
    Z = A.copy()
    Z[:, 2] = 0.0
    assert scaled_condition(Z) == math.inf
    assert scaled_condition(np.zeros((5, 0))) == math.inf
    assert scaled_condition(np.column_stack([A[:, 0], 2.0 * A[:, 0]])) > 1e12


def test_scaled_lstsq_is_least_squares_in_the_own_units():
    A = RNG.normal(size=(60, 3))
    units = np.array([1e-4, 1.0, 1e4])
    b = A @ np.array([2.0, -1.0, 0.5]) + 1e-3 * RNG.normal(size=60)
    expected = np.linalg.lstsq(A, b, rcond=None)[0] / units
    np.testing.assert_allclose(scaled_lstsq(A * units, b), expected, rtol=1e-9)
    B = np.column_stack([b, 2.0 * b])
    np.testing.assert_allclose(scaled_lstsq(A * units, B), np.column_stack(
        [expected, 2.0 * expected]), rtol=1e-9)
    Z = np.column_stack([A * units, np.zeros(60)])
    solution = scaled_lstsq(Z, b, rcond=1e-12)
    assert solution[-1] == 0.0
    np.testing.assert_allclose(solution[:3], expected, rtol=1e-9)
