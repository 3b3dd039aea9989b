"""Compiled RNEA: the algorithm of :mod:`rbd_dynamics.dynamics` on a packed model, with numba.

The reference implementation multiplies 6x6 matrices; here each transform is kept as a rotation
``E`` and a translation ``r`` (``X = rot(E) xlt(r)``), inertias as mass, first moment ``h = m c``
and rotational inertia about the body origin, and every product is written out in 3-D (the
Featherstone formulas of Eqs. 2.24-2.27 and Table 5.1). A call does no allocation: the model is
packed once into flat arrays and the workspace is preallocated.

Packed layout: one float64 array ``blob`` per model (offsets computed by :class:`PackedModel`):

- the integers, stored as int64 bit patterns: their count, a header ``[nb, nqf, nvf, nq, nv]``,
  per body ``parent``, ``jtype``, ``q_start``, ``v_start``, then ``q_src`` (nqf), ``v_src``
  (nvf) and the offsets of the float regions below;
- floats: gravity (3), per body ``BODY_FLOATS`` numbers (tree rotation ``Et`` row-major, tree
  translation ``rt``, axis, pitch, planar axes e1 and e2), then ``q_mult``, ``q_off`` (nqf each)
  and ``v_mult`` (nvf);
- inertia: ``(nb, 13)`` per body mass, ``h`` (3), rotational inertia about the origin (9);
- work: per body ``WORK_FLOATS`` numbers (``E``, ``r``, ``v``, ``a``, ``f``), then motion
  subspace columns (6 per velocity coordinate), ``qf``, ``vf``, ``af``, ``tauf``;
- fext: ``(nb, 6)`` external body forces, zero except during a call that has some;
- zero_v: ``nv`` zeros (velocity and acceleration of the static case).

One argument for the whole model keeps numba's per-call dispatch short. The single-state entry
points :func:`rnea1` and :func:`gravity1` check sizes themselves and return 1 when they do not
fit; after :func:`warm_up` they accept only the array types they were compiled for.

The compiled functions are cached on disk by numba; :func:`warm_up` compiles (or loads) them.
Set ``RBD_DYNAMICS_DISABLE_JIT=1`` to use the NumPy reference everywhere.
"""

import copy
import os

import numpy as np

try:  # numba is optional: without it the NumPy reference path is used.
    if os.environ.get('RBD_DYNAMICS_DISABLE_JIT', '') not in ('', '0'):
        raise ImportError('disabled by RBD_DYNAMICS_DISABLE_JIT')
    import numba
    from numba import njit, prange
    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised where numba is absent
    AVAILABLE = False

JTYPE_CODES = {'revolute': 0, 'continuous': 0, 'prismatic': 1, 'helical': 2, 'spherical': 3,
               'floating': 4, 'planar': 5}
HEADER = 5
BODY_FLOATS = 22
WORK_FLOATS = 30
MODE_FULL = 0
MODE_GRAVITY = 1


class PackedModel:
    """Flat arrays of a :class:`~rbd_dynamics.model.Model` for the compiled kernels."""

    def __init__(self, model):
        nb, nqf, nvf = model.nb, model.nqf, model.nvf
        self.nb, self.nqf, self.nvf, self.nq, self.nv = nb, nqf, nvf, model.nq, model.nv
        self.ints = np.concatenate((
            [nb, nqf, nvf, model.nq, model.nv], model.parent,
            [JTYPE_CODES[j.jtype] for j in model.joints], model.q_start, model.v_start,
            model.q_src, model.v_src)).astype(np.int64)
        body = np.zeros((nb, BODY_FLOATS))
        for i, joint in enumerate(model.joints):
            X = model.Xtree[i]
            E = X[:3, :3]
            # X = [[E, 0], [-E [r]x, E]]  =>  [r]x = -E^T X[3:, :3]
            rx = -E.T @ X[3:, :3]
            body[i, 0:9] = E.reshape(9)
            body[i, 9:12] = (rx[2, 1], rx[0, 2], rx[1, 0])
            body[i, 12:15] = joint.axis
            body[i, 15] = joint.pitch
            if joint.jtype == 'planar':
                body[i, 16:19] = joint._plane[:, 0]
                body[i, 19:22] = joint._plane[:, 1]
        floats = np.concatenate((model.gravity, body.reshape(-1), model.q_mult, model.q_off,
                                 model.v_mult)).astype(float)
        # The whole model lives in one float64 array (the integers as the bit patterns of
        # int64 at its start), so a call passes a single model argument: numba's dispatch costs
        # about 60 ns per argument, as much as a body's arithmetic.
        n_ints = len(self.ints) + 6
        sizes = (len(floats), 13 * nb, WORK_FLOATS * nb + 6 * nvf + nqf + 3 * nvf + 9, 6 * nb,
                 model.nv)
        offsets = 1 + n_ints + np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        ints = np.concatenate((self.ints, offsets)).astype(np.int64)
        self.blob = np.zeros(offsets[-1])
        self.blob.view(np.int64)[0] = n_ints
        self.blob.view(np.int64)[1:1 + n_ints] = ints
        self._views()
        self.floats[...] = floats
        self.inertia[...] = pack_inertia(model.inertia)

    def _views(self):
        """Name the regions of ``blob``: ints, floats, inertia, work, fext (zero), zero_v."""
        n_ints = int(self.blob.view(np.int64)[0])
        self.ints = self.blob.view(np.int64)[1:1 + n_ints]
        o = self.ints[-6:]
        self.floats = self.blob[o[0]:o[1]]
        self.inertia = self.blob[o[1]:o[2]].reshape(self.nb, 13)
        self.work = self.blob[o[2]:o[3]]
        self.fext = self.blob[o[3]:o[4]].reshape(self.nb, 6)
        self.zero_v = self.blob[o[4]:o[5]]
        self.zero_fext = np.zeros((self.nb, 6))

    def with_inertia(self, inertia):
        """A copy whose bodies have the packed ``(nb, 13)`` inertias (its own workspace)."""
        other = copy.copy(self)
        other.blob = self.blob.copy()
        other._views()
        other.inertia[...] = inertia
        return other


def pack_inertia(inertia):
    """``(nb, 6, 6)`` spatial inertias -> ``(nb, 13)``: mass, ``h = m c``, inertia at origin."""
    out = np.zeros((inertia.shape[0], 13))
    out[:, 0] = inertia[:, 3, 3]
    # upper-right block is m [c]x
    out[:, 1] = inertia[:, 2, 4]
    out[:, 2] = inertia[:, 0, 5]
    out[:, 3] = inertia[:, 1, 3]
    out[:, 4:13] = inertia[:, :3, :3].reshape(-1, 9)
    return out


if AVAILABLE:
    @njit(cache=True)
    def _joint_rotation(angle, ax, ay, az, w, off):
        """Write ``E = R(axis, angle)^T`` row-major into ``w[off:off + 9]``."""
        c = np.cos(angle)
        s = np.sin(angle)
        t = 1.0 - c
        w[off + 0] = c + t * ax * ax
        w[off + 1] = t * ax * ay + s * az
        w[off + 2] = t * ax * az - s * ay
        w[off + 3] = t * ax * ay - s * az
        w[off + 4] = c + t * ay * ay
        w[off + 5] = t * ay * az + s * ax
        w[off + 6] = t * ax * az + s * ay
        w[off + 7] = t * ay * az - s * ax
        w[off + 8] = c + t * az * az

    @njit(cache=True)
    def _quat_rotation(x, y, z, qw, w, off):
        """Write ``E = R(quaternion)^T`` row-major into ``w[off:off + 9]``."""
        n = np.sqrt(x * x + y * y + z * z + qw * qw)
        if not n > 1e-9:
            raise ValueError('quaternion [x, y, z, w] must have a finite, non-zero norm')
        x /= n
        y /= n
        z /= n
        qw /= n
        w[off + 0] = 1.0 - 2.0 * (y * y + z * z)
        w[off + 1] = 2.0 * (x * y + z * qw)
        w[off + 2] = 2.0 * (x * z - y * qw)
        w[off + 3] = 2.0 * (x * y - z * qw)
        w[off + 4] = 1.0 - 2.0 * (x * x + z * z)
        w[off + 5] = 2.0 * (y * z + x * qw)
        w[off + 6] = 2.0 * (x * z + y * qw)
        w[off + 7] = 2.0 * (y * z - x * qw)
        w[off + 8] = 1.0 - 2.0 * (x * x + y * y)

    @njit(cache=True)
    def _state(ints, fl, inertia, wk, q, qd, qdd, fext, tau, mode):
        """RNEA for one state; forces stay in ``wk`` (body force ``i`` at ``30 i + 24``)."""
        nb = ints[0]
        nqf = ints[1]
        nvf = ints[2]
        nv = ints[4]
        o_par = HEADER
        o_typ = o_par + nb
        o_qs = o_typ + nb
        o_vs = o_qs + nb
        o_qsrc = o_vs + nb
        o_vsrc = o_qsrc + nqf
        o_qmul = 3 + BODY_FLOATS * nb
        o_qoff = o_qmul + nqf
        o_vmul = o_qoff + nqf
        o_S = WORK_FLOATS * nb
        o_qf = o_S + 6 * nvf
        o_vf = o_qf + nqf
        o_af = o_vf + nvf
        o_tf = o_af + nvf
        o_ej = o_tf + nvf  # scratch: joint rotation EJ
        full = mode == MODE_FULL

        for k in range(nqf):
            wk[o_qf + k] = q[ints[o_qsrc + k]] * fl[o_qmul + k] + fl[o_qoff + k]
        for k in range(nvf):
            if full:
                wk[o_vf + k] = qd[ints[o_vsrc + k]] * fl[o_vmul + k]
                wk[o_af + k] = qdd[ints[o_vsrc + k]] * fl[o_vmul + k]
            else:
                wk[o_vf + k] = 0.0
                wk[o_af + k] = 0.0

        for i in range(nb):
            b = 3 + BODY_FLOATS * i
            w = WORK_FLOATS * i
            jt = ints[o_typ + i]
            qi = o_qf + ints[o_qs + i]
            vi = ints[o_vs + i]
            sv = o_S + 6 * vi
            ax = fl[b + 12]
            ay = fl[b + 13]
            az = fl[b + 14]
            # joint transform (rotation EJ into wk[w:w+9] for now, translation rJ) and S columns
            rjx = 0.0
            rjy = 0.0
            rjz = 0.0
            nj = 1
            if jt == 0 or jt == 2:
                _joint_rotation(wk[qi], ax, ay, az, wk, o_ej)
                pitch = fl[b + 15] if jt == 2 else 0.0
                rjx = pitch * wk[qi] * ax
                rjy = pitch * wk[qi] * ay
                rjz = pitch * wk[qi] * az
                wk[sv + 0] = ax
                wk[sv + 1] = ay
                wk[sv + 2] = az
                wk[sv + 3] = pitch * ax
                wk[sv + 4] = pitch * ay
                wk[sv + 5] = pitch * az
            elif jt == 1:
                for k in range(9):
                    wk[o_ej + k] = 0.0
                wk[o_ej + 0] = 1.0
                wk[o_ej + 4] = 1.0
                wk[o_ej + 8] = 1.0
                rjx = wk[qi] * ax
                rjy = wk[qi] * ay
                rjz = wk[qi] * az
                wk[sv + 0] = 0.0
                wk[sv + 1] = 0.0
                wk[sv + 2] = 0.0
                wk[sv + 3] = ax
                wk[sv + 4] = ay
                wk[sv + 5] = az
            elif jt == 3 or jt == 4:
                qo = qi + 3 if jt == 4 else qi
                _quat_rotation(wk[qo], wk[qo + 1], wk[qo + 2], wk[qo + 3], wk, o_ej)
                nj = 3
                if jt == 4:
                    rjx = wk[qi]
                    rjy = wk[qi + 1]
                    rjz = wk[qi + 2]
                    nj = 6
                for k in range(6 * nj):
                    wk[sv + k] = 0.0
                if jt == 3:
                    for k in range(3):
                        wk[sv + 7 * k] = 1.0  # column k: angular unit vector k
                else:
                    for k in range(3):
                        wk[sv + 6 * k + 3 + k] = 1.0  # qd[0:3]: linear velocity
                        wk[sv + 6 * (3 + k) + k] = 1.0  # qd[3:6]: angular velocity
            else:  # planar: [x, y, theta]
                _joint_rotation(wk[qi + 2], ax, ay, az, wk, o_ej)
                nj = 3
                for c in range(2):
                    p0 = fl[b + 16 + 3 * c]
                    p1 = fl[b + 17 + 3 * c]
                    p2 = fl[b + 18 + 3 * c]
                    rjx += wk[qi + c] * p0
                    rjy += wk[qi + c] * p1
                    rjz += wk[qi + c] * p2
                    col = sv + 6 * c
                    wk[col + 0] = 0.0
                    wk[col + 1] = 0.0
                    wk[col + 2] = 0.0
                    for r in range(3):
                        wk[col + 3 + r] = (wk[o_ej + 3 * r] * p0 + wk[o_ej + 3 * r + 1] * p1
                                           + wk[o_ej + 3 * r + 2] * p2)
                col = sv + 12
                wk[col + 0] = ax
                wk[col + 1] = ay
                wk[col + 2] = az
                wk[col + 3] = 0.0
                wk[col + 4] = 0.0
                wk[col + 5] = 0.0

            # joint velocity vJ = S qd and S qdd
            vj0 = 0.0
            vj1 = 0.0
            vj2 = 0.0
            vj3 = 0.0
            vj4 = 0.0
            vj5 = 0.0
            sa0 = 0.0
            sa1 = 0.0
            sa2 = 0.0
            sa3 = 0.0
            sa4 = 0.0
            sa5 = 0.0
            if full:
                for k in range(nj):
                    col = sv + 6 * k
                    qdk = wk[o_vf + vi + k]
                    qak = wk[o_af + vi + k]
                    vj0 += wk[col] * qdk
                    vj1 += wk[col + 1] * qdk
                    vj2 += wk[col + 2] * qdk
                    vj3 += wk[col + 3] * qdk
                    vj4 += wk[col + 4] * qdk
                    vj5 += wk[col + 5] * qdk
                    sa0 += wk[col] * qak
                    sa1 += wk[col + 1] * qak
                    sa2 += wk[col + 2] * qak
                    sa3 += wk[col + 3] * qak
                    sa4 += wk[col + 4] * qak
                    sa5 += wk[col + 5] * qak
                if jt == 5:
                    # cJ = -(axis theta_dot) x vJ_linear (apparent derivative of S in C)
                    td = wk[o_vf + vi + 2]
                    sa3 -= td * (ay * vj5 - az * vj4)
                    sa4 -= td * (az * vj3 - ax * vj5)
                    sa5 -= td * (ax * vj4 - ay * vj3)

            # E = EJ Et, r = rt + Et^T rJ
            for r in range(3):
                for c in range(3):
                    wk[w + 3 * r + c] = (wk[o_ej + 3 * r] * fl[b + c]
                                         + wk[o_ej + 3 * r + 1] * fl[b + 3 + c]
                                         + wk[o_ej + 3 * r + 2] * fl[b + 6 + c])
            e0 = wk[w + 0]
            e1 = wk[w + 1]
            e2 = wk[w + 2]
            e3 = wk[w + 3]
            e4 = wk[w + 4]
            e5 = wk[w + 5]
            e6 = wk[w + 6]
            e7 = wk[w + 7]
            e8 = wk[w + 8]
            wk[w + 9] = fl[b + 9] + fl[b + 0] * rjx + fl[b + 3] * rjy + fl[b + 6] * rjz
            wk[w + 10] = fl[b + 10] + fl[b + 1] * rjx + fl[b + 4] * rjy + fl[b + 7] * rjz
            wk[w + 11] = fl[b + 11] + fl[b + 2] * rjx + fl[b + 5] * rjy + fl[b + 8] * rjz
            rx = wk[w + 9]
            ry = wk[w + 10]
            rz = wk[w + 11]

            p = ints[o_par + i]
            # parent velocity and acceleration (base: v = 0, a = -a_g)
            if p < 0:
                pw0 = 0.0
                pw1 = 0.0
                pw2 = 0.0
                pv0 = 0.0
                pv1 = 0.0
                pv2 = 0.0
                pa0 = 0.0
                pa1 = 0.0
                pa2 = 0.0
                pl0 = -fl[0]
                pl1 = -fl[1]
                pl2 = -fl[2]
            else:
                pp = WORK_FLOATS * p
                pw0 = wk[pp + 12]
                pw1 = wk[pp + 13]
                pw2 = wk[pp + 14]
                pv0 = wk[pp + 15]
                pv1 = wk[pp + 16]
                pv2 = wk[pp + 17]
                pa0 = wk[pp + 18]
                pa1 = wk[pp + 19]
                pa2 = wk[pp + 20]
                pl0 = wk[pp + 21]
                pl1 = wk[pp + 22]
                pl2 = wk[pp + 23]

            # X m = (E w, E (v - r x w))
            if full:
                u0 = pv0 - (ry * pw2 - rz * pw1)
                u1 = pv1 - (rz * pw0 - rx * pw2)
                u2 = pv2 - (rx * pw1 - ry * pw0)
                w0 = e0 * pw0 + e1 * pw1 + e2 * pw2 + vj0
                w1 = e3 * pw0 + e4 * pw1 + e5 * pw2 + vj1
                w2 = e6 * pw0 + e7 * pw1 + e8 * pw2 + vj2
                v0 = e0 * u0 + e1 * u1 + e2 * u2 + vj3
                v1 = e3 * u0 + e4 * u1 + e5 * u2 + vj4
                v2 = e6 * u0 + e7 * u1 + e8 * u2 + vj5
            else:
                w0 = 0.0
                w1 = 0.0
                w2 = 0.0
                v0 = 0.0
                v1 = 0.0
                v2 = 0.0
            u0 = pl0 - (ry * pa2 - rz * pa1)
            u1 = pl1 - (rz * pa0 - rx * pa2)
            u2 = pl2 - (rx * pa1 - ry * pa0)
            a0 = e0 * pa0 + e1 * pa1 + e2 * pa2 + sa0
            a1 = e3 * pa0 + e4 * pa1 + e5 * pa2 + sa1
            a2 = e6 * pa0 + e7 * pa1 + e8 * pa2 + sa2
            l0 = e0 * u0 + e1 * u1 + e2 * u2 + sa3
            l1 = e3 * u0 + e4 * u1 + e5 * u2 + sa4
            l2 = e6 * u0 + e7 * u1 + e8 * u2 + sa5
            if full:
                # + v x vJ  (motion cross product, Eq. 2.31)
                a0 += w1 * vj2 - w2 * vj1
                a1 += w2 * vj0 - w0 * vj2
                a2 += w0 * vj1 - w1 * vj0
                l0 += w1 * vj5 - w2 * vj4 + v1 * vj2 - v2 * vj1
                l1 += w2 * vj3 - w0 * vj5 + v2 * vj0 - v0 * vj2
                l2 += w0 * vj4 - w1 * vj3 + v0 * vj1 - v1 * vj0
            wk[w + 12] = w0
            wk[w + 13] = w1
            wk[w + 14] = w2
            wk[w + 15] = v0
            wk[w + 16] = v1
            wk[w + 17] = v2
            wk[w + 18] = a0
            wk[w + 19] = a1
            wk[w + 20] = a2
            wk[w + 21] = l0
            wk[w + 22] = l1
            wk[w + 23] = l2

            # f = I a + v x* I v - f_ext, with I m = (Ibar w + h x v, m v - h x w)
            m = inertia[i, 0]
            h0 = inertia[i, 1]
            h1 = inertia[i, 2]
            h2 = inertia[i, 3]
            n0 = (inertia[i, 4] * a0 + inertia[i, 5] * a1 + inertia[i, 6] * a2
                  + h1 * l2 - h2 * l1)
            n1 = (inertia[i, 7] * a0 + inertia[i, 8] * a1 + inertia[i, 9] * a2
                  + h2 * l0 - h0 * l2)
            n2 = (inertia[i, 10] * a0 + inertia[i, 11] * a1 + inertia[i, 12] * a2
                  + h0 * l1 - h1 * l0)
            f0 = m * l0 - (h1 * a2 - h2 * a1)
            f1 = m * l1 - (h2 * a0 - h0 * a2)
            f2 = m * l2 - (h0 * a1 - h1 * a0)
            if full:
                in0 = (inertia[i, 4] * w0 + inertia[i, 5] * w1 + inertia[i, 6] * w2
                       + h1 * v2 - h2 * v1)
                in1 = (inertia[i, 7] * w0 + inertia[i, 8] * w1 + inertia[i, 9] * w2
                       + h2 * v0 - h0 * v2)
                in2 = (inertia[i, 10] * w0 + inertia[i, 11] * w1 + inertia[i, 12] * w2
                       + h0 * v1 - h1 * v0)
                if0 = m * v0 - (h1 * w2 - h2 * w1)
                if1 = m * v1 - (h2 * w0 - h0 * w2)
                if2 = m * v2 - (h0 * w1 - h1 * w0)
                # v x* (n, f) = (w x n + v x f, w x f)  (Eq. 2.32)
                n0 += w1 * in2 - w2 * in1 + v1 * if2 - v2 * if1
                n1 += w2 * in0 - w0 * in2 + v2 * if0 - v0 * if2
                n2 += w0 * in1 - w1 * in0 + v0 * if1 - v1 * if0
                f0 += w1 * if2 - w2 * if1
                f1 += w2 * if0 - w0 * if2
                f2 += w0 * if1 - w1 * if0
            wk[w + 24] = n0 - fext[i, 0]
            wk[w + 25] = n1 - fext[i, 1]
            wk[w + 26] = n2 - fext[i, 2]
            wk[w + 27] = f0 - fext[i, 3]
            wk[w + 28] = f1 - fext[i, 4]
            wk[w + 29] = f2 - fext[i, 5]

        for i in range(nb - 1, -1, -1):
            w = WORK_FLOATS * i
            vi = ints[o_vs + i]
            sv = o_S + 6 * vi
            nj = 1
            jt = ints[o_typ + i]
            if jt == 3 or jt == 5:
                nj = 3
            elif jt == 4:
                nj = 6
            for k in range(nj):
                col = sv + 6 * k
                acc = 0.0
                for r in range(6):
                    acc += wk[col + r] * wk[w + 24 + r]
                wk[o_tf + vi + k] = acc
            p = ints[o_par + i]
            if p >= 0:
                # X^T (n, f) = (E^T n + r x E^T f, E^T f)
                pp = WORK_FLOATS * p
                n0 = wk[w + 24]
                n1 = wk[w + 25]
                n2 = wk[w + 26]
                f0 = wk[w + 27]
                f1 = wk[w + 28]
                f2 = wk[w + 29]
                g0 = wk[w + 0] * f0 + wk[w + 3] * f1 + wk[w + 6] * f2
                g1 = wk[w + 1] * f0 + wk[w + 4] * f1 + wk[w + 7] * f2
                g2 = wk[w + 2] * f0 + wk[w + 5] * f1 + wk[w + 8] * f2
                rx = wk[w + 9]
                ry = wk[w + 10]
                rz = wk[w + 11]
                wk[pp + 24] += (wk[w + 0] * n0 + wk[w + 3] * n1 + wk[w + 6] * n2
                                + ry * g2 - rz * g1)
                wk[pp + 25] += (wk[w + 1] * n0 + wk[w + 4] * n1 + wk[w + 7] * n2
                                + rz * g0 - rx * g2)
                wk[pp + 26] += (wk[w + 2] * n0 + wk[w + 5] * n1 + wk[w + 8] * n2
                                + rx * g1 - ry * g0)
                wk[pp + 27] += g0
                wk[pp + 28] += g1
                wk[pp + 29] += g2

        for k in range(nv):
            tau[k] = 0.0
        for k in range(nvf):
            tau[ints[o_vsrc + k]] += fl[o_vmul + k] * wk[o_tf + k]

    @njit(cache=True)
    def _regions(blob):
        bits = blob.view(np.int64)
        n = bits[0]
        ints = bits[1:1 + n]
        nb = ints[0]
        o0, o1, o2, o3, o4, o5 = ints[n - 6], ints[n - 5], ints[n - 4], ints[n - 3], \
            ints[n - 2], ints[n - 1]
        return (ints, blob[o0:o1], blob[o1:o2].reshape((nb, 13)), blob[o2:o3],
                blob[o3:o4].reshape((nb, 6)), blob[o4:o5])

    @njit(cache=True)
    def rnea1(blob, q, qd, qdd, tau):
        """One state with the external forces of the blob's fext region; 1 for bad sizes."""
        ints, fl, inertia, wk, fext, _ = _regions(blob)
        nv = ints[4]
        if q.shape[0] != ints[3] or qd.shape[0] != nv or qdd.shape[0] != nv or \
                tau.shape[0] != nv:
            return 1
        _state(ints, fl, inertia, wk, q, qd, qdd, fext, tau, MODE_FULL)
        return 0

    @njit(cache=True)
    def gravity1(blob, q, tau):
        """One static state (zero velocity and acceleration); 1 for bad sizes."""
        ints, fl, inertia, wk, fext, zero = _regions(blob)
        if q.shape[0] != ints[3] or tau.shape[0] != ints[4]:
            return 1
        _state(ints, fl, inertia, wk, q, zero, zero, fext, tau, MODE_GRAVITY)
        return 0

    @njit(cache=True)
    def _batch(blob, q, qd, qdd, fext, tau, mode):
        """:func:`_state` over ``q (B, nq)``; ``fext`` is ``(B, nb, 6)`` or ``(1, nb, 6)``."""
        ints, fl, inertia, wk, _, _ = _regions(blob)
        shared = fext.shape[0] == 1
        for s in range(q.shape[0]):
            _state(ints, fl, inertia, wk, q[s], qd[s], qdd[s], fext[0 if shared else s], tau[s],
                   mode)

    @njit(cache=True, parallel=True)
    def _batch_parallel(blob, q, qd, qdd, fext, tau, mode, chunks):
        """:func:`_batch` split into ``chunks`` ranges run on numba's threads."""
        count = q.shape[0]
        size = (count + chunks - 1) // chunks
        shared = fext.shape[0] == 1
        for c in prange(chunks):
            ints, fl, inertia, wk, _, _ = _regions(blob.copy())  # a workspace per thread
            for s in range(c * size, min(count, (c + 1) * size)):
                _state(ints, fl, inertia, wk, q[s], qd[s], qdd[s], fext[0 if shared else s],
                       tau[s], mode)


#: Batches at least this large are spread over numba's threads (all cores by default; set
#: NUMBA_NUM_THREADS to limit them).
PARALLEL_BATCH = 256


def rnea_batch(packed, q, qd, qdd, fext, tau, mode=MODE_FULL):
    """Run the compiled RNEA on contiguous ``(B, n)`` arrays; ``fext`` ``(B or 1, nb, 6)``.

    The batch works in its own copies of the workspace, so it never disturbs single calls.
    """
    threads = numba.get_num_threads()
    if threads > 1 and q.shape[0] >= PARALLEL_BATCH:
        _batch_parallel(packed.blob, q, qd, qdd, fext, tau, mode, threads)
    else:
        _batch(packed.blob.copy(), q, qd, qdd, fext, tau, mode)


def warm_up(packed):
    """Compile (or load from numba's on-disk cache) the kernels, then freeze their types.

    Once warm, the single-state entry points accept only the types they were compiled for:
    anything else (a list, an integer or read-only array) raises ``TypeError`` at once, which
    the callers take as the signal to use the general path, instead of compiling a new variant
    in the middle of a control loop.
    """
    q = _neutral(packed)
    tau = np.zeros(packed.nv)
    rnea1(packed.blob, q, np.zeros(packed.nv), np.zeros(packed.nv), tau)
    gravity1(packed.blob, q, tau)
    rnea_batch(packed, q[None], np.zeros((1, packed.nv)), np.zeros((1, packed.nv)),
               packed.zero_fext[None], tau[None])
    for entry in (rnea1, gravity1):
        entry.disable_compile()


def _neutral(packed):
    """A valid configuration: zeros, with unit quaternions for spherical and floating joints."""
    q = np.zeros(packed.nq)
    ints = packed.ints
    nb = ints[0]
    o_typ, o_qs, o_qsrc = HEADER + nb, HEADER + 2 * nb, HEADER + 4 * nb
    for i in range(nb):
        jt = ints[o_typ + i]
        if jt in (3, 4):
            full_index = ints[o_qs + i] + (6 if jt == 4 else 3)
            q[ints[o_qsrc + full_index]] = 1.0
    return q
