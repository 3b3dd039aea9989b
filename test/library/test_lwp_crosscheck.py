"""
Cross-check against Luh, Walker and Paul's Newton-Euler recursion.

An independent check: the 3-D Newton-Euler recursion of Luh, Walker and Paul with modified
Denavit-Hartenberg parameters, on random revolute serial chains written out as URDF.

Frame i follows frame i-1 by Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i). Since Rz and Tz
commute, that is a URDF joint origin Rx(alpha) with translation Rx(alpha) (a, 0, d), followed
by the rotation about the joint's z axis.
"""

import numpy as np
import pytest
import rbd_dynamics as rbd
from support.urdf_builders import inertial, joint, link, robot


def rot_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def newton_euler_mdh(mdh, masses, coms, inertias, q, qd, qdd, gravity):
    """Joint torques by the outward/inward recursion (frames i, origins at the joints)."""
    n = len(q)
    z = np.array([0.0, 0.0, 1.0])
    rots, positions = [], []
    for (alpha, a, d), theta in zip(mdh, q):
        rots.append(rot_x(alpha) @ rot_z(theta))  # R_{i-1,i}
        positions.append(rot_x(alpha) @ np.array([a, 0.0, d]))  # origin i in frame i-1
    w = np.zeros(3)
    dw = np.zeros(3)
    dv = -np.asarray(gravity, dtype=float)  # the base accelerates up instead of gravity down
    forces, moments = [], []
    for i in range(n):
        rt = rots[i].T
        dv = rt @ (np.cross(dw, positions[i]) + np.cross(w, np.cross(w, positions[i])) + dv)
        dw = rt @ dw + np.cross(rt @ w, qd[i] * z) + qdd[i] * z
        w = rt @ w + qd[i] * z
        dv_c = np.cross(dw, coms[i]) + np.cross(w, np.cross(w, coms[i])) + dv
        forces.append(masses[i] * dv_c)
        moments.append(inertias[i] @ dw + np.cross(w, inertias[i] @ w))
    tau = np.zeros(n)
    f = np.zeros(3)
    nn = np.zeros(3)
    for i in reversed(range(n)):
        if i + 1 < n:
            f_next = rots[i + 1] @ f
            nn = moments[i] + rots[i + 1] @ nn + np.cross(coms[i], forces[i]) \
                + np.cross(positions[i + 1], f_next)
            f = f_next + forces[i]
        else:
            nn = moments[i] + np.cross(coms[i], forces[i])
            f = forces[i]
        tau[i] = nn @ z
    return tau


def random_chain(rng, n):
    mdh = [(rng.uniform(-np.pi, np.pi), rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4))
           for _ in range(n)]
    masses = rng.uniform(0.5, 5.0, n)
    coms = rng.uniform(-0.2, 0.2, (n, 3))
    inertias = []
    for _ in range(n):
        a = rng.normal(scale=0.2, size=(3, 3))
        second = a @ a.T
        inertias.append(np.trace(second) * np.eye(3) - second)  # physically consistent
    parts = [link('l0')]
    for i, (alpha, a, d) in enumerate(mdh):
        origin = rot_x(alpha) @ np.array([a, 0.0, d])
        parts.append(joint('j%d' % (i + 1), 'revolute', 'l%d' % i, 'l%d' % (i + 1), xyz=origin,
                           rpy=(alpha, 0, 0)))
        ic = inertias[i]
        parts.append(link('l%d' % (i + 1), inertial(
            masses[i], coms[i], ixx=ic[0, 0], iyy=ic[1, 1], izz=ic[2, 2], ixy=ic[0, 1],
            ixz=ic[0, 2], iyz=ic[1, 2])))
    return robot('mdh_chain', *parts), (mdh, masses, coms, inertias)


@pytest.mark.parametrize('seed, n', [(0, 1), (1, 2), (2, 3), (3, 6), (4, 7), (5, 12)])
def test_random_mdh_chains(seed, n):
    rng = np.random.default_rng(seed)
    text, params = random_chain(rng, n)
    gravity = rng.normal(size=3) * 5.0
    model = rbd.Model.from_urdf(text, gravity=gravity)
    assert model.joint_names == tuple('j%d' % (i + 1) for i in range(n))
    for _ in range(10):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, (3, n))
        ref = newton_euler_mdh(*params, q, qd, qdd, gravity)
        np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), ref, rtol=1e-10,
                                   atol=1e-10 * max(1.0, np.abs(ref).max()))
        ref_g = newton_euler_mdh(*params, q, np.zeros(n), np.zeros(n), gravity)
        np.testing.assert_allclose(rbd.gravity_torques(model, q), ref_g, rtol=1e-10,
                                   atol=1e-10 * max(1.0, np.abs(ref_g).max()))
