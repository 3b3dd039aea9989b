"""
The drive beside the rigid bodies: friction and rotor inertia of each joint.

A real joint needs more torque than the rigid-body dynamics says: its drive loses some to viscous
and Coulomb friction, and accelerates a rotor whose inertia the gear reflects onto the joint
(``armature``, gear ratio squared times the rotor inertia). Per joint::

    tau_drive = armature * qdd + viscous * qd + coulomb * tanh(qd / coulomb_velocity)

The smooth sign ``tanh(qd / coulomb_velocity)`` keeps the law continuous through zero velocity
(a controller must not chatter there); ``coulomb_velocity`` is the speed at which it reaches 76 %
of the Coulomb torque. URDFs carry ``viscous`` and ``coulomb`` as ``<dynamics damping
friction>`` (:attr:`rbd_dynamics.Model.damping`, :attr:`~rbd_dynamics.Model.friction`).

The law is linear in its coefficients (the width held): :func:`drive_columns` gives, per joint,
the torque of each coefficient at 1, the drive's columns of a regressor. Identification adds
an effort ``offset`` (a constant that a sensor adds to the measured efforts) as a fourth term,
column 1: ``tau_drive + offset`` is ``drive_columns(qd, qdd, coulomb_velocity) @ [viscous,
coulomb, armature, offset]`` joint by joint.
"""

import numpy as np

#: Default width of the smooth sign of Coulomb friction [rad/s or m/s].
COULOMB_VELOCITY = 0.01
#: The drive's terms, each a coefficient per joint, in the order of :func:`drive_columns`.
DRIVE_TERMS = ('viscous', 'coulomb', 'armature', 'offset')


def drive_torques(qd, qdd=None, viscous=0.0, coulomb=0.0, armature=0.0,
                  coulomb_velocity=COULOMB_VELOCITY):
    """
    Joint torques the drives need beyond the rigid-body dynamics.

    Parameters
    ----------
    qd
        ``(nv,)`` or ``(..., nv)`` joint velocities [rad/s or m/s].
    qdd
        accelerations like ``qd`` [rad/s^2 or m/s^2]; ``None`` for zero.
    viscous
        ``(nv,)`` or scalar viscous coefficients [N m s/rad or N s/m].
    coulomb
        ``(nv,)`` or scalar Coulomb friction [N m or N].
    armature
        ``(nv,)`` or scalar reflected rotor inertia [kg m^2 or kg].
    coulomb_velocity
        ``(nv,)`` or scalar width of the smooth sign, > 0 [rad/s or m/s]: joints' friction
        changes sign over different speeds.

    Returns
    -------
    ``(..., nv)`` torques [N m or N], in the order of ``qd``.

    Raises
    ------
    ValueError
        ``coulomb_velocity`` is not positive and finite.

    """
    width = np.asarray(coulomb_velocity, dtype=float)
    if not (np.isfinite(width).all() and (width > 0.0).all()):
        raise ValueError('coulomb_velocity must be positive finite numbers, got %r'
                         % (coulomb_velocity,))
    qd = np.asarray(qd, dtype=float)
    if qdd is not None:
        qdd = np.asarray(qdd, dtype=float)
    return np.asarray(drive_law(qd, qdd, viscous, coulomb, armature, width), dtype=float)


def drive_law(qd, qdd, viscous, coulomb, armature, coulomb_velocity):
    """
    :func:`drive_torques` without its checks, for a caller that checked its arguments once.

    ``qd`` and ``qdd`` (or ``None``) are float arrays, ``coulomb_velocity`` is positive and
    finite; the result broadcasts like ``viscous * qd``.
    """
    tau = viscous * qd + coulomb * _smooth_sign(qd, coulomb_velocity)
    return tau if qdd is None else tau + armature * qdd


def drive_columns(qd, qdd=None, coulomb_velocity=COULOMB_VELOCITY, terms=DRIVE_TERMS):
    """
    Return the drive's columns: per joint, the torque of each term's coefficient at 1.

    Viscous ``qd``, Coulomb ``tanh(qd / coulomb_velocity)``, armature ``qdd`` and offset ``1``
    (see the module docstring); joint ``j``'s drive torque is ``columns[..., j, :] @
    coefficients[j]``.

    Parameters
    ----------
    qd
        ``(..., nv)`` joint velocities [rad/s or m/s].
    qdd
        accelerations like ``qd`` [rad/s^2 or m/s^2]; only the armature column needs them.
    coulomb_velocity
        ``(nv,)`` or scalar width of the smooth sign, positive (unchecked) [rad/s or m/s].
    terms
        the columns to return, in order: names of :data:`DRIVE_TERMS`.

    Returns
    -------
    ``(..., nv, len(terms))`` columns: each the torque per unit of its coefficient.

    Raises
    ------
    ValueError
        a term that is not one of :data:`DRIVE_TERMS`, or ``armature`` without ``qdd``.

    """
    qd = np.asarray(qd, dtype=float)
    out = np.empty(qd.shape + (len(terms),))
    for k, term in enumerate(terms):
        if term == 'viscous':
            out[..., k] = qd
        elif term == 'coulomb':
            out[..., k] = _smooth_sign(qd, coulomb_velocity)
        elif term == 'armature':
            if qdd is None:
                raise ValueError('the armature column needs the accelerations qdd')
            out[..., k] = qdd
        elif term == 'offset':
            out[..., k] = 1.0
        else:
            raise ValueError('%r is no drive term (%s)' % (term, ', '.join(DRIVE_TERMS)))
    return out


def _smooth_sign(qd, coulomb_velocity):
    """Return the smooth sign of Coulomb friction, ``tanh(qd / coulomb_velocity)``."""
    return np.tanh(qd / coulomb_velocity)
