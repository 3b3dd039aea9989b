"""
Matrices with their columns scaled to unit norm: the condition number and least squares.

A regressor's columns carry parameters of different units (a mass, a first moment, a friction
coefficient), so their sizes differ by orders of magnitude that say nothing of how well the
data determine them. Scaled to unit norm, the columns' condition number measures the
determination alone (the classical choice of identification), and a least-squares solve on
them does not lose the small columns to the large ones' rounding.

The rule for a column of zeros (a parameter no row sees): its norm is taken as 1, so that
scaling leaves it zero and divides by nothing; the matrix is then singular, and its scaled
condition number is infinite. A least-squares solve gives such a column's parameter 0 (the
minimum-norm solution).
"""

import math

import numpy as np


def column_norms(A):
    """
    Return the Euclidean norm of every column of ``A`` ``(m, n)``, a zero column's as 1: ``(n,)``.

    ``A / column_norms(A)`` has unit columns, and a zero column stays zero.
    """
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    return norms


def scaled_condition(A):
    """
    Return the condition number of ``A`` ``(m, n)`` with its columns scaled to unit norm.

    The ratio of the largest to the smallest singular value of ``A / column_norms(A)``:
    ``inf`` when ``A`` has a zero column or no column, or is otherwise singular.
    """
    A = np.asarray(A, dtype=float)
    norms = np.linalg.norm(A, axis=0)
    if not A.shape[1] or not np.all(norms > 0):
        return math.inf
    s = np.linalg.svd(A / norms, compute_uv=False)
    return float(s[0] / s[-1]) if len(s) and s[-1] > 0 else math.inf


def scaled_lstsq(A, b, rcond=None):
    """
    Return the least-squares solution of ``A x = b`` solved with ``A``'s columns at unit norm.

    Parameters
    ----------
    A
        ``(m, n)`` the matrix.
    b
        ``(m,)`` or ``(m, k)`` the right-hand side.
    rcond
        :func:`numpy.linalg.lstsq`'s cut-off for small singular values, relative to the
        largest, of the scaled matrix; ``None``: its default (machine precision times the
        larger dimension).

    Returns
    -------
    ``(n,)`` or ``(n, k)`` the solution in ``A``'s own units; a zero column's entry 0.

    """
    norms = column_norms(A)
    x = np.linalg.lstsq(A / norms, b, rcond=rcond)[0]
    return x / norms if x.ndim == 1 else x / norms[:, None]
