"""The finite Fourier series an excitation moves each joint along, starting and ending at rest."""

import math

import numpy as np

from ..analysis import AnalysisError


DEFAULT_PERIOD = 10.0
#: Default number of harmonics per joint.
DEFAULT_HARMONICS = 5


class FourierBasis:
    """
    The series of one joint on a time grid: ``q - q0 = P z``, ``qd = V z``, ``qdd = A z``.

    ``z`` holds the ``2 L - 2`` free coefficients (an orthonormal basis of the null space of
    the rest conditions, sine coefficients first).
    """

    def __init__(self, harmonics, period):
        if harmonics < 2:
            raise AnalysisError('the excitation needs at least 2 harmonics')
        self.harmonics, self.period = harmonics, period
        self.w = 2.0 * math.pi / period
        order = np.arange(1, harmonics + 1, dtype=float)
        self.null_sin = _null_space(order)
        self.null_cos = _null_space(order ** 2)
        self.size = 2 * (harmonics - 1)

    def matrices(self, t):
        """``(P, V, A)``, each ``(len(t), size)``, at times ``t`` [s]."""
        t = np.asarray(t, dtype=float)[:, None]
        order = np.arange(1, self.harmonics + 1, dtype=float)
        lw = order * self.w
        s, c = np.sin(lw * t), np.cos(lw * t)
        pos = np.hstack([s @ self.null_sin, (1.0 - c) @ self.null_cos])
        vel = np.hstack([(lw * c) @ self.null_sin, (lw * s) @ self.null_cos])
        acc = np.hstack([(-lw ** 2 * s) @ self.null_sin, (lw ** 2 * c) @ self.null_cos])
        return pos, vel, acc


def _null_space(row):
    """Orthonormal basis ``(n, n - 1)`` of the vectors orthogonal to ``row``."""
    _, _, vt = np.linalg.svd(row[None, :])
    return vt[1:].T
