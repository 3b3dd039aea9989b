"""
Inertial parameters of a rigid body: the 10-vector, the pseudo-inertia and the URDF values.

A body's ten parameters ``[m, m cx, m cy, m cz, ixx, ixy, ixz, iyy, iyz, izz]`` (mass, first
moment and rotational inertia about its frame's origin, in its axes) are the columns of
:func:`rbd_dynamics.regressor`; :meth:`rbd_dynamics.Model.inertial_parameters` reads them with
:func:`parameters_from_spatial`. The 4x4 pseudo-inertia is positive semi-definite exactly when
the parameters are those of a physical body; :func:`link_inertial` gives the mass, centre of
mass and inertia about it that a URDF ``<inertial>`` holds. NumPy only.
"""

import numpy as np


def parameters_from_spatial(inertia):
    """Ten parameters ``(..., 10)`` of spatial inertias ``(..., 6, 6)`` (Featherstone layout)."""
    inertia = np.asarray(inertia, dtype=float)
    out = np.empty(inertia.shape[:-2] + (10,))
    out[..., 0] = inertia[..., 3, 3]
    out[..., 1] = inertia[..., 2, 4]
    out[..., 2] = inertia[..., 0, 5]
    out[..., 3] = inertia[..., 1, 3]
    out[..., 4:] = inertia[..., (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    return out


def spatial_from_parameters(theta):
    """Spatial inertias ``(..., 6, 6)`` of parameters ``(..., 10)`` (inverse of the above)."""
    theta = np.asarray(theta, dtype=float)
    out = np.zeros(theta.shape[:-1] + (6, 6))
    out[..., :3, :3] = rotational_inertia(theta)
    hx, hy, hz = theta[..., 1], theta[..., 2], theta[..., 3]
    h = np.zeros(theta.shape[:-1] + (3, 3))          # skew(h) = m c x
    h[..., 0, 1], h[..., 0, 2], h[..., 1, 2] = -hz, hy, -hx
    h[..., 1, 0], h[..., 2, 0], h[..., 2, 1] = hz, -hy, hx
    out[..., :3, 3:] = h
    out[..., 3:, :3] = np.swapaxes(h, -1, -2)
    out[..., 3:, 3:] = theta[..., 0, None, None] * np.eye(3)
    return out


def parameter_map(X):
    """
    ``(10, 10)`` ``T`` with ``pi_B = T pi_A`` for one body's parameters in two frames.

    ``X`` is the motion transform from B's coordinates to A's (``v_A = X v_B``); then ``I_B =
    X^T I_A X``, linear in the parameters.
    """
    X = np.asarray(X, dtype=float)
    return np.stack([parameters_from_spatial(X.T @ spatial_from_parameters(e) @ X)
                     for e in np.eye(10)], axis=1)


def rotational_inertia(theta):
    """``(..., 3, 3)`` rotational inertia about the frame origin of parameters ``(..., 10)``."""
    theta = np.asarray(theta, dtype=float)
    ixx, ixy, ixz, iyy, iyz, izz = (theta[..., k] for k in range(4, 10))
    return np.stack([np.stack([ixx, ixy, ixz], -1), np.stack([ixy, iyy, iyz], -1),
                     np.stack([ixz, iyz, izz], -1)], -2)


def pseudo_inertia(theta):
    """
    4x4 pseudo-inertia ``[[Sigma, h], [h^T, m]]`` of parameters ``(..., 10)``.

    ``Sigma = tr(I) / 2 * 1 - I`` is the second moment of the mass distribution; the body is
    physically consistent (a mass distribution could have it) exactly when this is positive
    semi-definite (Wensing, Kim & Slotine, IEEE RA-L 2017).
    """
    theta = np.asarray(theta, dtype=float)
    inertia = rotational_inertia(theta)
    trace = np.trace(inertia, axis1=-2, axis2=-1)
    out = np.zeros(theta.shape[:-1] + (4, 4))
    out[..., :3, :3] = 0.5 * trace[..., None, None] * np.eye(3) - inertia
    out[..., :3, 3] = theta[..., 1:4]
    out[..., 3, :3] = theta[..., 1:4]
    out[..., 3, 3] = theta[..., 0]
    return out


def parameters_from_pseudo(J):
    """Ten parameters ``(..., 10)`` of pseudo-inertias ``(..., 4, 4)`` (inverse of the above)."""
    J = np.asarray(J, dtype=float)
    sigma = J[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    out = np.empty(J.shape[:-2] + (10,))
    out[..., 0] = J[..., 3, 3]
    out[..., 1:4] = J[..., :3, 3]
    out[..., 4:] = inertia[..., (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    return out


def consistency_margin(theta):
    """
    Smallest eigenvalue of the pseudo-inertia over its trace, per body: ``>= 0`` is consistent.

    ``theta`` is ``(..., 10)``; a body without mass gives 0.
    """
    J = pseudo_inertia(theta)
    scale = np.maximum(np.trace(J, axis1=-2, axis2=-1), 1e-300)
    return np.linalg.eigvalsh(J)[..., 0] / scale


def link_inertial(theta):
    """
    Mass, centre of mass and inertia about it of parameters ``(10,)`` about a link's origin.

    Returns
    -------
    ``(mass, com (3,), inertia (3, 3))``; a body without mass has its com at the origin.

    """
    theta = np.asarray(theta, dtype=float)
    mass = float(theta[0])
    com = theta[1:4] / mass if mass > 0 else np.zeros(3)
    inertia = rotational_inertia(theta)
    # parallel axes: I_origin = I_com + m (|c|^2 1 - c c^T)
    inertia = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
    return mass, com, inertia
