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
"""

import numpy as np

#: Default width of the smooth sign of Coulomb friction [rad/s or m/s].
COULOMB_VELOCITY = 0.01


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
    tau = viscous * qd + coulomb * np.tanh(qd / coulomb_velocity)
    return tau if qdd is None else tau + armature * qdd
