"""
What changes in a model at runtime: its payloads and its compiled path, as one value.

See :mod:`rbd_dynamics.model` for how a :class:`RuntimeState` is swapped whole.
"""

import math
import types

import numpy as np

from .spatial import inertia_problem, inertia_tensor


class RuntimeState:
    """
    What changes in a model at runtime, as one value that is never modified.

    :meth:`Model.set_payload`, :meth:`Model.clear_payloads` and :meth:`Model.compile` build a
    new one and swap ``model.runtime`` under the model's writer lock; a reader takes
    ``model.runtime`` once and computes with that one consistent set.

    Attributes
    ----------
    inertia
        ``(nb, 6, 6)`` body inertias with the payloads, model body coordinates (read-only).
    link_inertia
        link -> ``(6, 6)`` inertia of the link and its payload, in its body's coordinates.
    payloads
        read-only link -> :class:`Payload`.
    packed
        the compiled path's :class:`~.compiled.packed.PackedModel` holding ``inertia``, or
        ``None`` (NumPy path).
    eom_packed
        ``packed`` where the equations of motion are compiled too (a numba that compiles them
        in reasonable time, :data:`~rbd_dynamics.compiled.EOM_MIN_NUMBA`), else ``None``.
    beyond
        link -> what :func:`~rbd_dynamics.payload_wrench` needs of the bodies beyond it: a
        cache filled on first use, each entry computed from this state's values alone (so a
        race only computes an entry twice, equal).

    """

    __slots__ = ('inertia', 'link_inertia', 'payloads', 'packed', 'eom_packed', 'beyond')

    def __init__(self, inertia, link_inertia, payloads, packed):
        inertia.setflags(write=False)
        self.inertia = inertia
        self.link_inertia = types.MappingProxyType(dict(link_inertia))
        self.payloads = types.MappingProxyType(dict(payloads))
        self.packed = packed
        self.eom_packed = packed if packed is not None and packed.eom_compiled else None
        self.beyond = {}

    def replace(self, packed):
        """Return the same state with another packed model (and a fresh cache)."""
        return RuntimeState(self.inertia, self.link_inertia, self.payloads, packed)


class Payload:
    """
    A rigid payload held by a link (see :meth:`Model.set_payload`).

    Attributes
    ----------
    mass
        [kg].
    com
        ``(3,)`` centre of mass in the link frame [m].
    inertia
        ``(3, 3)`` rotational inertia about the centre of mass, link axes [kg m^2].

    """

    __slots__ = ('mass', 'com', 'inertia')

    def __init__(self, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """
        Check and keep the values.

        Raises
        ------
        ValueError
            a negative or non-finite value, or wrong sizes.

        """
        try:
            mass = float(mass)
            com = np.array(com, dtype=float).reshape(-1)
            inertia = np.array(inertia, dtype=float)
        except (TypeError, ValueError):
            raise ValueError('payload: mass, com and inertia must be numbers') from None
        if not (math.isfinite(mass) and mass >= 0.0):
            raise ValueError('payload mass must be finite and >= 0, got %r' % mass)
        if com.shape != (3,) or not np.isfinite(com).all():
            raise ValueError('payload com must be 3 finite numbers, got %s' % com.tolist())
        if inertia.shape == (6,):
            inertia = inertia_tensor(inertia)
        if inertia.shape != (3, 3) or not np.isfinite(inertia).all():
            raise ValueError('payload inertia must be 6 finite numbers (ixx, ixy, ixz, iyy, '
                             'iyz, izz), got %s' % inertia.reshape(-1).tolist())
        problem = 'is not symmetric' if not np.allclose(inertia, inertia.T) \
            else inertia_problem(inertia)
        if problem:
            raise ValueError('payload inertia %s: %s (a body has moments >= 0, none larger '
                             'than the sum of the others)'
                             % (problem, inertia.reshape(-1).tolist()))
        self.mass = mass
        self.com = com
        self.inertia = inertia

    def __repr__(self):
        return 'Payload(mass=%r, com=%s, inertia=%s)' % (
            self.mass, self.com.tolist(), self.inertia.tolist())
