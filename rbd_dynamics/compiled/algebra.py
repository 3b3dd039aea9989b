"""
The kernels' algebra: 3-D vectors and matrices as tuples, and spatial vectors as pairs of them.

A 3-D vector is a 3-tuple of floats and a 3x3 matrix a 9-tuple, row-major: numba keeps them in
registers. A spatial vector is its angular and linear 3-tuples; a transform
``X = rot(E) xlt(r)`` is ``E`` and ``r`` (Featherstone ch. 2), and every product is written out
in 3-D. All are compiled inline.
"""

import math

from .jit import kernel
from .layout import IN_H, IN_MASS, IN_ROT


# 3-D vectors and matrices as tuples of scalars: numba keeps them in registers. A 3x3
# matrix is a 9-tuple, row-major.


@kernel(inline='always')
def row3(a, i, col):
    """``a[i, col:col + 3]``."""
    return a[i, col], a[i, col + 1], a[i, col + 2]


@kernel(inline='always')
def row9(a, i, col):
    """``a[i, col:col + 9]``: a 3x3 matrix."""
    return (a[i, col], a[i, col + 1], a[i, col + 2], a[i, col + 3], a[i, col + 4],
            a[i, col + 5], a[i, col + 6], a[i, col + 7], a[i, col + 8])


@kernel(inline='always')
def put3(a, i, col, x):
    """``a[i, col:col + 3] = x``."""
    a[i, col] = x[0]
    a[i, col + 1] = x[1]
    a[i, col + 2] = x[2]


@kernel(inline='always')
def put9(a, i, col, x):
    """``a[i, col:col + 9] = x``."""
    for k in range(3):
        put3(a, i, col + 3 * k, (x[3 * k], x[3 * k + 1], x[3 * k + 2]))


@kernel(inline='always')
def add(x, y):
    return x[0] + y[0], x[1] + y[1], x[2] + y[2]


@kernel(inline='always')
def sub(x, y):
    return x[0] - y[0], x[1] - y[1], x[2] - y[2]


@kernel(inline='always')
def scale(s, x):
    return s * x[0], s * x[1], s * x[2]


@kernel(inline='always')
def dot(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


@kernel(inline='always')
def cross(x, y):
    return x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]


@kernel(inline='always')
def rotate(E, x):
    """``E x``."""
    return (E[0] * x[0] + E[1] * x[1] + E[2] * x[2],
            E[3] * x[0] + E[4] * x[1] + E[5] * x[2],
            E[6] * x[0] + E[7] * x[1] + E[8] * x[2])


@kernel(inline='always')
def rotate_t(E, x):
    """``E^T x``."""
    return (E[0] * x[0] + E[3] * x[1] + E[6] * x[2],
            E[1] * x[0] + E[4] * x[1] + E[7] * x[2],
            E[2] * x[0] + E[5] * x[1] + E[8] * x[2])


@kernel(inline='always')
def matmul(A, B):
    """Return the 3x3 product ``A B`` (row-major, flat)."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
            A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
            A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


# Spatial algebra (Featherstone ch. 2): a spatial vector is its angular and linear 3-tuples;
# a transform X = rot(E) xlt(r) is E and r.


@kernel(inline='always')
def motion_transform(E, r, w, v):
    """``X m = (E w, E (v - r x w))`` (Eq. 2.24)."""
    return rotate(E, w), rotate(E, sub(v, cross(r, w)))


@kernel(inline='always')
def transpose_force_transform(E, r, n, f):
    """
    Transform a force of the child frame to the parent frame (Eq. 2.25).

    ``X^T f = (E^T n + r x E^T f, E^T f)``: a force of the child frame in the parent
    frame (Eq. 2.25).
    """
    g = rotate_t(E, f)
    return add(rotate_t(E, n), cross(r, g)), g


@kernel(inline='always')
def motion_cross(w, v, mw, mv):
    """``v x m = (w x mw, w x mv + v x mw)`` (Eq. 2.31)."""
    return cross(w, mw), add(cross(w, mv), cross(v, mw))


@kernel(inline='always')
def force_cross(w, v, n, f):
    """``v x* f = (w x n + v x f, w x f)`` (Eq. 2.32)."""
    return add(cross(w, n), cross(v, f)), cross(w, f)


@kernel(inline='always')
def inertia_product(a, i, col, w, v):
    """
    Multiply a motion by a spatial inertia (Eq. 2.63): ``I m = (Ibar w + h x v, m v - h x w)``.

    The inertia is row ``i`` of ``a`` from column ``col`` on: mass ``m``, ``h = m c`` and
    ``Ibar`` about the body origin (the inertia columns' order, ``IN_``).
    """
    m = a[i, col + IN_MASS]
    h = row3(a, i, col + IN_H)
    o = col + IN_ROT
    xx, xy, xz, yy, yz, zz = a[i, o], a[i, o + 1], a[i, o + 2], a[i, o + 3], a[i, o + 4], \
        a[i, o + 5]
    ibar_w = (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2],
              xz * w[0] + yz * w[1] + zz * w[2])
    return add(ibar_w, cross(h, v)), sub(scale(m, v), cross(h, w))


@kernel(inline='always')
def subspace_product(S, vi, nj, x):
    """``S x``: the columns ``S[vi:vi + nj]`` weighted by ``x[vi:vi + nj]``."""
    w0 = w1 = w2 = v0 = v1 = v2 = 0.0
    for k in range(vi, vi + nj):
        w0 += S[k, 0] * x[k]
        w1 += S[k, 1] * x[k]
        w2 += S[k, 2] * x[k]
        v0 += S[k, 3] * x[k]
        v1 += S[k, 4] * x[k]
        v2 += S[k, 5] * x[k]
    return (w0, w1, w2), (v0, v1, v2)


@kernel(inline='always')
def matmul_t(A, B):
    """Return the 3x3 product ``A^T B`` (row-major, flat)."""
    return (A[0] * B[0] + A[3] * B[3] + A[6] * B[6],
            A[0] * B[1] + A[3] * B[4] + A[6] * B[7],
            A[0] * B[2] + A[3] * B[5] + A[6] * B[8],
            A[1] * B[0] + A[4] * B[3] + A[7] * B[6],
            A[1] * B[1] + A[4] * B[4] + A[7] * B[7],
            A[1] * B[2] + A[4] * B[5] + A[7] * B[8],
            A[2] * B[0] + A[5] * B[3] + A[8] * B[6],
            A[2] * B[1] + A[5] * B[4] + A[8] * B[7],
            A[2] * B[2] + A[5] * B[5] + A[8] * B[8])


@kernel(inline='always')
def dot6(aw, av, bw, bv):
    """Return the product of a motion and a force (two 6-vectors): ``a . b``."""
    return (aw[0] * bw[0] + aw[1] * bw[1] + aw[2] * bw[2] + av[0] * bv[0] + av[1] * bv[1]
            + av[2] * bv[2])


@kernel(inline='always')
def quaternion_of(R):
    """
    Return ``(x, y, z, w)`` of the rotation matrix ``R`` (9-tuple, row-major), ``w >= 0``.

    :func:`rbd_dynamics.spatial.quaternion_of_rows` compiled: Shepperd's method (the largest of
    the four squares first, the first of equals); a matrix that is no rotation (all four
    squares zero) gives the identity.
    """
    trace = R[0] + R[4] + R[8]
    s0, s1, s2, s3 = 1.0 + trace, 1.0 + 2.0 * R[0] - trace, 1.0 + 2.0 * R[4] - trace, \
        1.0 + 2.0 * R[8] - trace
    k, best = 0, s0
    if s1 > best:
        k, best = 1, s1
    if s2 > best:
        k, best = 2, s2
    if s3 > best:
        k, best = 3, s3
    s = 2.0 * math.sqrt(max(best, 0.0))
    if not s > 0.0:
        return 0.0, 0.0, 0.0, 1.0
    if k == 0:
        w, x, y, z = s / 4, (R[7] - R[5]) / s, (R[2] - R[6]) / s, (R[3] - R[1]) / s
    elif k == 1:
        w, x, y, z = (R[7] - R[5]) / s, s / 4, (R[1] + R[3]) / s, (R[2] + R[6]) / s
    elif k == 2:
        w, x, y, z = (R[2] - R[6]) / s, (R[1] + R[3]) / s, s / 4, (R[5] + R[7]) / s
    else:
        w, x, y, z = (R[3] - R[1]) / s, (R[2] + R[6]) / s, (R[5] + R[7]) / s, s / 4
    if w < 0.0:
        return -x, -y, -z, -w
    return x, y, z, w


@kernel(inline='always')
def cholesky(M, n, tolerance):
    """
    Factor ``M`` (its lower triangle, ``n`` × ``n``) in place into ``L`` with ``M = L Lᵀ``.

    False where a pivot is not above ``tolerance`` times the diagonal entry it came from (not
    positive definite for 0; NaN too): ``M`` is then left part factored.
    """
    for j in range(n):
        d = M[j, j]
        floor = tolerance * d
        for k in range(j):
            d -= M[j, k] * M[j, k]
        if not d > floor:
            return False
        d = math.sqrt(d)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    return True
