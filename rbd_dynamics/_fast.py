"""Compiled RNEA: the algorithm of :mod:`rbd_dynamics.dynamics` on a packed model, with numba.

The reference implementation multiplies 6x6 matrices; here each transform is kept as a rotation
``E`` and a translation ``r`` (``X = rot(E) xlt(r)``), inertias as mass, first moment ``h = m c``
and rotational inertia about the body origin, and every product is written out in 3-D (the
Featherstone formulas of Eqs. 2.24-2.27 and Table 5.1).

Body coordinates. The packed model turns the coordinate frame of every body with a 1-DoF joint
(revolute, continuous, prismatic, helical) by a constant rotation ``Q`` so that the joint axis
becomes the body's z axis: ``S`` is then ``[0 0 sa 0 0 sl]`` (``sa, sl`` = 1, 0 revolute; 0, 1
prismatic; 1, pitch helical), the joint rotation touches two rows of ``E`` and every product with
``S`` or ``vJ`` is a handful of terms (body coordinates are ours to choose, Featherstone
sec. 4.4). Bodies of multi-DoF joints keep their frame. ``Q`` is folded into the tree transforms
and the inertias once, and into external forces and returned body forces at the edges:
``f_packed = [Q^T n; Q^T f]``.

Static states have their own kernel: with zero velocity and acceleration every angular
acceleration is zero, so the forward pass carries only the linear acceleration.

Packed layout: one float64 array ``blob`` per model (offsets computed by :class:`PackedModel`).
It starts with integers, stored as int64 bit patterns: their count, a header ``[nb, nqf, nvf,
nq, nv]``, per body ``[parent, jtype, q_start, v_start]``, ``q_src`` (nqf), ``v_src`` (nvf) and
the offsets of the float regions, which are (see :data:`REGIONS`):

- maps: gravity (3), ``q_mult``, ``q_off`` (nqf each), ``v_mult`` (nvf);
- body ``(nb, BODY_FLOATS)``: tree rotation ``Et`` row-major, tree translation ``rt``, ``sa``,
  ``sl``, and for multi-DoF joints the axis and the planar axes e1 and e2;
- inertia ``(nb, 10)``: mass, ``h`` (3), rotational inertia about the origin (xx, xy, xz, yy,
  yz, zz);
- work ``(nb, WORK_FLOATS)``: ``E``, ``r``, ``w``, ``v``, angular and linear acceleration,
  ``n``, ``f``;
- subspace ``(nvf, 6)``: motion subspace columns of multi-DoF joints;
- scratch: ``qf``, ``vf``, ``af``, ``tauf`` and a joint rotation (9);
- zero_v: ``nv`` zeros;
- spare: ``nv`` torques that :func:`body_force1` computes and nobody reads.

Per-body data sits in 2-D arrays read with constant column indices: numba then has no negative
index to correct on each access, which halves the cost of a body. One argument for the whole
model keeps a call short: each array argument costs the call some time. Every compiled function
here is built without numba's reference-counting runtime (they only read and write arrays they
are given), which makes passing an array much cheaper still. The single-state entry points check
sizes themselves and return 1 when they do not fit; after :func:`warm_up` the callers reach the
compiled code through :data:`ENTRY` directly, without numba's type dispatch, so
:func:`single_state_inputs` must hold for what they pass.

The compiled functions are cached on disk by numba; :func:`warm_up` compiles (or loads) them.
Set ``RBD_DYNAMICS_DISABLE_JIT=1`` to use the NumPy reference everywhere.
"""

import copy
import os

import numpy as np

from .spatial import axis_angle_to_matrix

#: How much slower a single-state call is on the NumPy path than on the compiled one, rounded
#: (the demo arm: 1.3 us compiled, 1.6 ms NumPy, both for ``rnea`` and ``gravity_torques``, on
#: a 2-core x86_64 VM): the figure the node's start-up note quotes.
NUMPY_PATH_SLOWDOWN = 1000

_DISABLED = 'disabled by RBD_DYNAMICS_DISABLE_JIT'

try:  # numba is a requirement, but without it the NumPy reference path still works.
    if os.environ.get('RBD_DYNAMICS_DISABLE_JIT', '') not in ('', '0'):
        raise ImportError(_DISABLED)
    import numba
    from numba import njit, prange, types
    AVAILABLE = True
    #: Why the compiled path cannot be used; ``''`` when it can.
    UNAVAILABLE_REASON = ''
except ImportError as _err:  # pragma: no cover - exercised where numba is absent
    AVAILABLE = False
    UNAVAILABLE_REASON = ('numba is not installed' if _err.name == 'numba' else _DISABLED
                          if str(_err) == _DISABLED else 'numba cannot be imported: %s' % _err)


def numpy_path_note():
    """The one-line note a program shows when the compiled path is unavailable, else ``''``."""
    if AVAILABLE:
        return ''
    return ('numba not available (%s): NumPy path, about %d times slower'
            % (UNAVAILABLE_REASON, NUMPY_PATH_SLOWDOWN))


JTYPE_CODES = {'revolute': 0, 'continuous': 0, 'prismatic': 1, 'helical': 2, 'spherical': 3,
               'floating': 4, 'planar': 5}
ONE_DOF = 2  # type codes up to this one move along / about the body's z axis
HEADER = 5
BODY_INTS = 4  # parent, jtype, q_start, v_start
REGIONS = ('maps', 'body', 'inertia', 'work', 'subspace', 'scratch', 'zero_v', 'spare')
# body columns
B_SA = 12  # angular part of S (z); Et is 0-8, rt 9-11
B_SL = 13  # linear part of S (z)
B_AXIS = 14  # multi-DoF joints: axis (3), planar e1 (3), planar e2 (3)
BODY_FLOATS = 23
INERTIA_FLOATS = 10
# work columns
W_R, W_W, W_V, W_AW, W_AL, W_N, W_F = 9, 12, 15, 18, 21, 24, 27  # E is 0-8
WORK_FLOATS = 30
MODE_FULL = 0
MODE_STATIC = 1
_EYE3 = np.eye(3)
_F8 = np.dtype(np.float64)
#: public ``[force, torque]`` <-> Featherstone ``[n, f]`` (its own inverse)
SWAP = np.block([[np.zeros((3, 3)), _EYE3], [_EYE3, np.zeros((3, 3))]])


def z_to_axis(axis):
    """The rotation ``Q`` (3x3) that turns z onto the unit vector ``axis``: identity for z, half
    a turn about x for -z, the smallest turn otherwise."""
    k = np.array([-axis[1], axis[0], 0.0])  # z x axis
    sin = np.linalg.norm(k)
    if sin == 0.0:
        return _EYE3.copy() if axis[2] > 0.0 else np.diag([1.0, -1.0, -1.0])
    return axis_angle_to_matrix(k / sin, np.arctan2(sin, axis[2]))


def _rot6(E):
    """``rot(E)``: the 6x6 transform of a pure rotation (also its own force transform)."""
    out = np.zeros((6, 6))
    out[:3, :3] = E
    out[3:, 3:] = E
    return out


class PackedModel:
    """Flat arrays of a :class:`~rbd_dynamics.model.Model` for the compiled kernels.

    Attributes:
        blob: the packed model and its workspace.
        rotation: ``(nb, 3, 3)`` ``Q`` of each body: model body coordinates = ``Q`` packed ones.
        link_wrench_to_body: link -> ``(6, 6)`` map of a public wrench (force first, link
            coordinates) to a body force in packed body coordinates, for links on moving bodies.
        zero_fext: ``(nb, 6)`` zeros, never written: no external force.
        rnea1, gravity1, body_force1: the entry points of :data:`ENTRY`, set by :func:`warm_up`.
    """

    def __init__(self, model):
        nb, nqf, nvf = model.nb, model.nqf, model.nvf
        self.nb, self.nqf, self.nvf, self.nq, self.nv = nb, nqf, nvf, model.nq, model.nv
        codes = [JTYPE_CODES[j.jtype] for j in model.joints]
        rotation = np.array([z_to_axis(j.axis) if c <= ONE_DOF else _EYE3
                             for j, c in zip(model.joints, codes)]).reshape(nb, 3, 3)
        body = np.zeros((nb, BODY_FLOATS))
        for i, joint in enumerate(model.joints):
            X = model.Xtree[i]
            E = X[:3, :3]
            # X = [[E, 0], [-E [r]x, E]]  =>  [r]x = -E^T X[3:, :3]
            rx = -E.T @ X[3:, :3]
            r = np.array((rx[2, 1], rx[0, 2], rx[1, 0]))
            Qp = rotation[model.parent[i]] if model.parent[i] >= 0 else _EYE3
            # rot(Q_i^T) rot(E) xlt(r) rot(Q_p) = rot(Q_i^T E Q_p) xlt(Q_p^T r)
            body[i, 0:9] = (rotation[i].T @ E @ Qp).reshape(9)
            body[i, 9:12] = Qp.T @ r
            code = codes[i]
            if code <= ONE_DOF:
                body[i, B_SA] = 0.0 if code == 1 else 1.0
                body[i, B_SL] = {0: 0.0, 1: 1.0, 2: joint.pitch}[code]
            else:
                body[i, B_AXIS:B_AXIS + 3] = joint.axis
                if joint.jtype == 'planar':
                    body[i, B_AXIS + 3:B_AXIS + 6] = joint._plane[:, 0]
                    body[i, B_AXIS + 6:B_AXIS + 9] = joint._plane[:, 1]
        self.rotation = rotation
        self.link_wrench_to_body = {
            link: _rot6(rotation[b].T) @ model.link_force_to_body[link] @ SWAP
            for link, b in model.link_body.items() if b >= 0}

        body_ints = np.stack((model.parent, codes, model.q_start, model.v_start), axis=-1)
        ints = np.concatenate(([nb, nqf, nvf, model.nq, model.nv], body_ints.reshape(-1),
                               model.q_src, model.v_src)).astype(np.int64)
        maps = np.concatenate((model.gravity, model.q_mult, model.q_off, model.v_mult))
        sizes = (len(maps), BODY_FLOATS * nb, INERTIA_FLOATS * nb, WORK_FLOATS * nb, 6 * nvf,
                 nqf + 4 * nvf + 9, model.nv, model.nv)
        # The whole model lives in one float64 array (the integers as the bit patterns of
        # int64 at its start), so a call passes a single model argument.
        n_ints = len(ints) + len(REGIONS) + 1
        offsets = 1 + n_ints + np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.blob = np.zeros(offsets[-1])
        self.blob.view(np.int64)[0] = n_ints
        self.blob.view(np.int64)[1:1 + n_ints] = np.concatenate((ints, offsets))
        self._views()
        self.maps[...] = maps
        self.body[...] = body
        self.inertia[...] = self.pack_inertia(model.inertia)
        self.zero_fext = np.zeros((nb, 6))

    def _views(self):
        """Name the regions of ``blob`` (attributes ``ints`` and those of :data:`REGIONS`)."""
        n_ints = int(self.blob.view(np.int64)[0])
        self.ints = self.blob.view(np.int64)[1:1 + n_ints]
        offsets = self.ints[-len(REGIONS) - 1:]
        for k, name in enumerate(REGIONS):
            setattr(self, name, self.blob[offsets[k]:offsets[k + 1]])
        self.body = self.body.reshape(self.nb, BODY_FLOATS)
        self.inertia = self.inertia.reshape(self.nb, INERTIA_FLOATS)
        self.work = self.work.reshape(self.nb, WORK_FLOATS)

    def pack_inertia(self, inertia):
        """``(nb, 6, 6)`` spatial inertias in model body coordinates -> ``(nb, 10)``: mass,
        ``h = m c`` and the rotational inertia at the origin, in packed body coordinates."""
        out = np.zeros((inertia.shape[0], INERTIA_FLOATS))
        for i, Q in enumerate(self.rotation):
            R = _rot6(Q)
            packed = R.T @ inertia[i] @ R
            out[i, 0] = packed[3, 3]
            # the upper-right block is [h]x
            out[i, 1:4] = packed[2, 4], packed[0, 5], packed[1, 3]
            out[i, 4:10] = packed[0, 0], packed[0, 1], packed[0, 2], packed[1, 1], \
                packed[1, 2], packed[2, 2]
        return out

    def with_inertia(self, inertia):
        """A copy whose bodies have the ``(nb, 6, 6)`` inertias (model body coordinates), with
        its own workspace."""
        other = copy.copy(self)
        other.blob = self.blob.copy()
        other._views()
        other.inertia[...] = self.pack_inertia(inertia)
        return other

    def forces_in(self, fext):
        """``(..., nb, 6)`` body forces in model body coordinates -> packed ones (contiguous)."""
        out = np.empty(fext.shape)
        out[..., :3] = np.einsum('bji,...bj->...bi', self.rotation, fext[..., :3])
        out[..., 3:] = np.einsum('bji,...bj->...bi', self.rotation, fext[..., 3:])
        return out


def single_state_inputs(q, qd=None, qdd=None):
    """True when the arrays may go to an :data:`ENTRY` function: float64 vectors (any
    strides). Those functions skip numba's type checks, so anything else must not reach them."""
    try:
        return (q.dtype is _F8 and q.ndim == 1
                and (qd is None or (qd.dtype is _F8 and qd.ndim == 1))
                and (qdd is None or (qdd.dtype is _F8 and qdd.ndim == 1)))
    except AttributeError:  # not an array
        return False


def _kernel(**options):
    """``njit``, cached, and without numba's reference-counting runtime where this numba
    version can leave it out. Every compiled function here is built this way: a function that
    both kinds of caller share would otherwise be cached for one kind and loaded for the
    other."""
    try:
        return njit(cache=True, _nrt=False, **options)
    except (KeyError, TypeError):  # pragma: no cover - numba without that option
        return njit(cache=True, **options)


if AVAILABLE:
    @_kernel()
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

    @_kernel()
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

    @_kernel()
    def _regions(blob):
        """The views of ``blob``: ``(header, body ints (nb, 4), q_src and v_src, maps, body,
        inertia, work, subspace, scratch, spare)``."""
        bits = blob.view(np.int64)
        n = bits[0]
        ints = bits[1:1 + n]
        nb = ints[0]
        nvf = ints[2]
        o = n - 9  # the offsets: 8 regions and the end
        b = HEADER + BODY_INTS * nb
        return (ints[:HEADER], ints[HEADER:b].reshape((nb, BODY_INTS)), ints[b:o],
                blob[ints[o]:ints[o + 1]],
                blob[ints[o + 1]:ints[o + 2]].reshape((nb, BODY_FLOATS)),
                blob[ints[o + 2]:ints[o + 3]].reshape((nb, INERTIA_FLOATS)),
                blob[ints[o + 3]:ints[o + 4]].reshape((nb, WORK_FLOATS)),
                blob[ints[o + 4]:ints[o + 5]].reshape((nvf, 6)),
                blob[ints[o + 5]:ints[o + 6]],
                blob[ints[o + 7]:ints[o + 8]])

    @_kernel(inline='always')
    def _full_coordinates(hdr, src, maps, ws, q, qd, qdd, full):
        """``qf`` (at ``ws[0]``), and with ``full`` ``vf``, ``af``: one entry per body joint
        (mimic joints follow their masters)."""
        nqf = hdr[1]
        nvf = hdr[2]
        for k in range(nqf):
            ws[k] = q[src[k]] * maps[3 + k] + maps[3 + nqf + k]
        if full:
            for k in range(nvf):
                j = src[nqf + k]
                m = maps[3 + 2 * nqf + k]
                ws[nqf + k] = qd[j] * m
                ws[nqf + nvf + k] = qdd[j] * m

    @_kernel(inline='always')
    def _one_dof_transform(body, wb, i, jt, x):
        """``E`` and ``r`` of body ``i``, whose joint moves about / along z by ``x``:
        ``E = Rz(x)^T Et`` (two rows turn), ``r = rt + Et^T z sl x``."""
        if jt == 1:
            for k in range(9):
                wb[i, k] = body[i, k]
        else:
            c = np.cos(x)
            s = np.sin(x)
            for k in range(3):
                wb[i, k] = c * body[i, k] + s * body[i, 3 + k]
                wb[i, 3 + k] = c * body[i, 3 + k] - s * body[i, k]
                wb[i, 6 + k] = body[i, 6 + k]
        if jt == 0:
            for k in range(3):
                wb[i, W_R + k] = body[i, 9 + k]
        else:
            d = body[i, B_SL] * x
            for k in range(3):
                wb[i, W_R + k] = body[i, 9 + k] + d * body[i, 6 + k]

    @_kernel()
    def _multi_dof_transform(body, wb, S, ws, i, jt, qf, qi, vi, o_ej):
        """``E``, ``r`` and the columns of ``S`` (rows ``vi...`` of ``S``) of body ``i``, whose
        spherical, floating or planar joint has coordinates ``qf[qi:]``. Returns the number of
        columns. ``ws[o_ej:o_ej + 9]`` is scratch."""
        rjx = 0.0
        rjy = 0.0
        rjz = 0.0
        ax = body[i, B_AXIS]
        ay = body[i, B_AXIS + 1]
        az = body[i, B_AXIS + 2]
        if jt == 3 or jt == 4:
            qo = qi + 3 if jt == 4 else qi
            _quat_rotation(qf[qo], qf[qo + 1], qf[qo + 2], qf[qo + 3], ws, o_ej)
            nj = 3
            if jt == 4:
                rjx = qf[qi]
                rjy = qf[qi + 1]
                rjz = qf[qi + 2]
                nj = 6
            for k in range(nj):
                for r in range(6):
                    S[vi + k, r] = 0.0
            if jt == 3:
                for k in range(3):
                    S[vi + k, k] = 1.0  # column k: angular unit vector k
            else:
                for k in range(3):
                    S[vi + k, 3 + k] = 1.0  # qd[0:3]: linear velocity
                    S[vi + 3 + k, k] = 1.0  # qd[3:6]: angular velocity
        else:  # planar: [x, y, theta]
            _joint_rotation(qf[qi + 2], ax, ay, az, ws, o_ej)
            nj = 3
            for c in range(2):
                p0 = body[i, B_AXIS + 3 + 3 * c]
                p1 = body[i, B_AXIS + 4 + 3 * c]
                p2 = body[i, B_AXIS + 5 + 3 * c]
                rjx += qf[qi + c] * p0
                rjy += qf[qi + c] * p1
                rjz += qf[qi + c] * p2
                for r in range(3):
                    S[vi + c, r] = 0.0
                    S[vi + c, 3 + r] = (ws[o_ej + 3 * r] * p0 + ws[o_ej + 3 * r + 1] * p1
                                        + ws[o_ej + 3 * r + 2] * p2)
            S[vi + 2, 0] = ax
            S[vi + 2, 1] = ay
            S[vi + 2, 2] = az
            S[vi + 2, 3] = 0.0
            S[vi + 2, 4] = 0.0
            S[vi + 2, 5] = 0.0
        # E = EJ Et, r = rt + Et^T rJ
        for r in range(3):
            for c in range(3):
                wb[i, 3 * r + c] = (ws[o_ej + 3 * r] * body[i, c]
                                    + ws[o_ej + 3 * r + 1] * body[i, 3 + c]
                                    + ws[o_ej + 3 * r + 2] * body[i, 6 + c])
        for k in range(3):
            wb[i, W_R + k] = (body[i, 9 + k] + body[i, k] * rjx + body[i, 3 + k] * rjy
                              + body[i, 6 + k] * rjz)
        return nj

    @_kernel()
    def _rnea_state(R, q, qd, qdd, fext, tau):
        """RNEA for one state; body forces stay in the work region (columns ``W_N``, ``W_F``)."""
        hdr, bi, src, maps, body, inertia, wb, S, ws, _ = R
        nb = hdr[0]
        nqf = hdr[1]
        nvf = hdr[2]
        o_vf = nqf
        o_af = nqf + nvf
        o_ej = nqf + 4 * nvf
        _full_coordinates(hdr, src, maps, ws, q, qd, qdd, True)
        for i in range(nb):
            jt = bi[i, 1]
            vi = bi[i, 3]
            p = bi[i, 0]
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
                pl0 = -maps[0]
                pl1 = -maps[1]
                pl2 = -maps[2]
            else:
                pw0 = wb[p, W_W]
                pw1 = wb[p, W_W + 1]
                pw2 = wb[p, W_W + 2]
                pv0 = wb[p, W_V]
                pv1 = wb[p, W_V + 1]
                pv2 = wb[p, W_V + 2]
                pa0 = wb[p, W_AW]
                pa1 = wb[p, W_AW + 1]
                pa2 = wb[p, W_AW + 2]
                pl0 = wb[p, W_AL]
                pl1 = wb[p, W_AL + 1]
                pl2 = wb[p, W_AL + 2]
            if jt <= ONE_DOF:
                _one_dof_transform(body, wb, i, jt, ws[bi[i, 2]])
            else:
                nj = _multi_dof_transform(body, wb, S, ws, i, jt, ws, bi[i, 2], vi, o_ej)
            e0 = wb[i, 0]
            e1 = wb[i, 1]
            e2 = wb[i, 2]
            e3 = wb[i, 3]
            e4 = wb[i, 4]
            e5 = wb[i, 5]
            e6 = wb[i, 6]
            e7 = wb[i, 7]
            e8 = wb[i, 8]
            rx = wb[i, W_R]
            ry = wb[i, W_R + 1]
            rz = wb[i, W_R + 2]
            # X m = (E w, E (v - r x w))
            u0 = pv0 - (ry * pw2 - rz * pw1)
            u1 = pv1 - (rz * pw0 - rx * pw2)
            u2 = pv2 - (rx * pw1 - ry * pw0)
            w0 = e0 * pw0 + e1 * pw1 + e2 * pw2
            w1 = e3 * pw0 + e4 * pw1 + e5 * pw2
            w2 = e6 * pw0 + e7 * pw1 + e8 * pw2
            v0 = e0 * u0 + e1 * u1 + e2 * u2
            v1 = e3 * u0 + e4 * u1 + e5 * u2
            v2 = e6 * u0 + e7 * u1 + e8 * u2
            u0 = pl0 - (ry * pa2 - rz * pa1)
            u1 = pl1 - (rz * pa0 - rx * pa2)
            u2 = pl2 - (rx * pa1 - ry * pa0)
            a0 = e0 * pa0 + e1 * pa1 + e2 * pa2
            a1 = e3 * pa0 + e4 * pa1 + e5 * pa2
            a2 = e6 * pa0 + e7 * pa1 + e8 * pa2
            l0 = e0 * u0 + e1 * u1 + e2 * u2
            l1 = e3 * u0 + e4 * u1 + e5 * u2
            l2 = e6 * u0 + e7 * u1 + e8 * u2
            if jt <= ONE_DOF:
                # v += vJ = S qd, a += S qdd + v x vJ, with S = [0 0 sa 0 0 sl]
                sa = body[i, B_SA]
                sl = body[i, B_SL]
                dq = ws[o_vf + vi]
                ddq = ws[o_af + vi]
                dw = sa * dq
                dl = sl * dq
                w2 += dw
                v2 += dl
                a0 += w1 * dw
                a1 -= w0 * dw
                a2 += sa * ddq
                l0 += w1 * dl + v1 * dw
                l1 -= w0 * dl + v0 * dw
                l2 += sl * ddq
            else:
                vj0 = 0.0
                vj1 = 0.0
                vj2 = 0.0
                vj3 = 0.0
                vj4 = 0.0
                vj5 = 0.0
                for k in range(nj):
                    qdk = ws[o_vf + vi + k]
                    qak = ws[o_af + vi + k]
                    vj0 += S[vi + k, 0] * qdk
                    vj1 += S[vi + k, 1] * qdk
                    vj2 += S[vi + k, 2] * qdk
                    vj3 += S[vi + k, 3] * qdk
                    vj4 += S[vi + k, 4] * qdk
                    vj5 += S[vi + k, 5] * qdk
                    a0 += S[vi + k, 0] * qak
                    a1 += S[vi + k, 1] * qak
                    a2 += S[vi + k, 2] * qak
                    l0 += S[vi + k, 3] * qak
                    l1 += S[vi + k, 4] * qak
                    l2 += S[vi + k, 5] * qak
                if jt == 5:
                    # cJ = -(axis theta_dot) x vJ_linear (apparent derivative of S in C)
                    td = ws[o_vf + vi + 2]
                    ax = body[i, B_AXIS]
                    ay = body[i, B_AXIS + 1]
                    az = body[i, B_AXIS + 2]
                    l0 -= td * (ay * vj5 - az * vj4)
                    l1 -= td * (az * vj3 - ax * vj5)
                    l2 -= td * (ax * vj4 - ay * vj3)
                w0 += vj0
                w1 += vj1
                w2 += vj2
                v0 += vj3
                v1 += vj4
                v2 += vj5
                # + v x vJ  (motion cross product, Eq. 2.31)
                a0 += w1 * vj2 - w2 * vj1
                a1 += w2 * vj0 - w0 * vj2
                a2 += w0 * vj1 - w1 * vj0
                l0 += w1 * vj5 - w2 * vj4 + v1 * vj2 - v2 * vj1
                l1 += w2 * vj3 - w0 * vj5 + v2 * vj0 - v0 * vj2
                l2 += w0 * vj4 - w1 * vj3 + v0 * vj1 - v1 * vj0
            wb[i, W_W] = w0
            wb[i, W_W + 1] = w1
            wb[i, W_W + 2] = w2
            wb[i, W_V] = v0
            wb[i, W_V + 1] = v1
            wb[i, W_V + 2] = v2
            wb[i, W_AW] = a0
            wb[i, W_AW + 1] = a1
            wb[i, W_AW + 2] = a2
            wb[i, W_AL] = l0
            wb[i, W_AL + 1] = l1
            wb[i, W_AL + 2] = l2

            # f = I a + v x* I v - f_ext, with I m = (Ibar w + h x v, m v - h x w)
            m = inertia[i, 0]
            h0 = inertia[i, 1]
            h1 = inertia[i, 2]
            h2 = inertia[i, 3]
            ixx = inertia[i, 4]
            ixy = inertia[i, 5]
            ixz = inertia[i, 6]
            iyy = inertia[i, 7]
            iyz = inertia[i, 8]
            izz = inertia[i, 9]
            n0 = ixx * a0 + ixy * a1 + ixz * a2 + h1 * l2 - h2 * l1
            n1 = ixy * a0 + iyy * a1 + iyz * a2 + h2 * l0 - h0 * l2
            n2 = ixz * a0 + iyz * a1 + izz * a2 + h0 * l1 - h1 * l0
            f0 = m * l0 - (h1 * a2 - h2 * a1)
            f1 = m * l1 - (h2 * a0 - h0 * a2)
            f2 = m * l2 - (h0 * a1 - h1 * a0)
            in0 = ixx * w0 + ixy * w1 + ixz * w2 + h1 * v2 - h2 * v1
            in1 = ixy * w0 + iyy * w1 + iyz * w2 + h2 * v0 - h0 * v2
            in2 = ixz * w0 + iyz * w1 + izz * w2 + h0 * v1 - h1 * v0
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
            wb[i, W_N] = n0 - fext[i, 0]
            wb[i, W_N + 1] = n1 - fext[i, 1]
            wb[i, W_N + 2] = n2 - fext[i, 2]
            wb[i, W_F] = f0 - fext[i, 3]
            wb[i, W_F + 1] = f1 - fext[i, 4]
            wb[i, W_F + 2] = f2 - fext[i, 5]
        _backward(R, tau)

    @_kernel()
    def _static_state(R, q, fext, tau):
        """RNEA with zero velocity and acceleration: only linear accelerations (gravity)
        propagate, ``n = h x l``, ``f = m l``."""
        hdr, bi, src, maps, body, inertia, wb, S, ws, _ = R
        nb = hdr[0]
        o_ej = hdr[1] + 4 * hdr[2]
        _full_coordinates(hdr, src, maps, ws, q, q, q, False)
        for i in range(nb):
            jt = bi[i, 1]
            p = bi[i, 0]
            if p < 0:
                pl0 = -maps[0]
                pl1 = -maps[1]
                pl2 = -maps[2]
            else:
                pl0 = wb[p, W_AL]
                pl1 = wb[p, W_AL + 1]
                pl2 = wb[p, W_AL + 2]
            if jt <= ONE_DOF:
                _one_dof_transform(body, wb, i, jt, ws[bi[i, 2]])
            else:
                _multi_dof_transform(body, wb, S, ws, i, jt, ws, bi[i, 2], bi[i, 3], o_ej)
            l0 = wb[i, 0] * pl0 + wb[i, 1] * pl1 + wb[i, 2] * pl2
            l1 = wb[i, 3] * pl0 + wb[i, 4] * pl1 + wb[i, 5] * pl2
            l2 = wb[i, 6] * pl0 + wb[i, 7] * pl1 + wb[i, 8] * pl2
            wb[i, W_AL] = l0
            wb[i, W_AL + 1] = l1
            wb[i, W_AL + 2] = l2
            m = inertia[i, 0]
            h0 = inertia[i, 1]
            h1 = inertia[i, 2]
            h2 = inertia[i, 3]
            wb[i, W_N] = h1 * l2 - h2 * l1 - fext[i, 0]
            wb[i, W_N + 1] = h2 * l0 - h0 * l2 - fext[i, 1]
            wb[i, W_N + 2] = h0 * l1 - h1 * l0 - fext[i, 2]
            wb[i, W_F] = m * l0 - fext[i, 3]
            wb[i, W_F + 1] = m * l1 - fext[i, 4]
            wb[i, W_F + 2] = m * l2 - fext[i, 5]
        _backward(R, tau)

    @_kernel(inline='always')
    def _backward(R, tau):
        """Backward pass: ``tau_i = S_i^T f_i``, ``f_parent += X^T f_i``; then fold mimic
        joints into their masters."""
        hdr, bi, src, maps, body, inertia, wb, S, ws, _ = R
        nb = hdr[0]
        nqf = hdr[1]
        nvf = hdr[2]
        nv = hdr[4]
        o_tf = nqf + 2 * nvf
        for i in range(nb - 1, -1, -1):
            vi = bi[i, 3]
            jt = bi[i, 1]
            n0 = wb[i, W_N]
            n1 = wb[i, W_N + 1]
            n2 = wb[i, W_N + 2]
            f0 = wb[i, W_F]
            f1 = wb[i, W_F + 1]
            f2 = wb[i, W_F + 2]
            if jt <= ONE_DOF:
                ws[o_tf + vi] = body[i, B_SA] * n2 + body[i, B_SL] * f2
            else:
                nj = 3 if jt != 4 else 6
                for k in range(nj):
                    ws[o_tf + vi + k] = (S[vi + k, 0] * n0 + S[vi + k, 1] * n1
                                         + S[vi + k, 2] * n2 + S[vi + k, 3] * f0
                                         + S[vi + k, 4] * f1 + S[vi + k, 5] * f2)
            p = bi[i, 0]
            if p >= 0:
                # X^T (n, f) = (E^T n + r x E^T f, E^T f)
                g0 = wb[i, 0] * f0 + wb[i, 3] * f1 + wb[i, 6] * f2
                g1 = wb[i, 1] * f0 + wb[i, 4] * f1 + wb[i, 7] * f2
                g2 = wb[i, 2] * f0 + wb[i, 5] * f1 + wb[i, 8] * f2
                rx = wb[i, W_R]
                ry = wb[i, W_R + 1]
                rz = wb[i, W_R + 2]
                wb[p, W_N] += (wb[i, 0] * n0 + wb[i, 3] * n1 + wb[i, 6] * n2
                               + ry * g2 - rz * g1)
                wb[p, W_N + 1] += (wb[i, 1] * n0 + wb[i, 4] * n1 + wb[i, 7] * n2
                                   + rz * g0 - rx * g2)
                wb[p, W_N + 2] += (wb[i, 2] * n0 + wb[i, 5] * n1 + wb[i, 8] * n2
                                   + rx * g1 - ry * g0)
                wb[p, W_F] += g0
                wb[p, W_F + 1] += g1
                wb[p, W_F + 2] += g2
        for k in range(nv):
            tau[k] = 0.0
        o_vmul = 3 + 2 * nqf
        for k in range(nvf):
            tau[src[nqf + k]] += maps[o_vmul + k] * ws[o_tf + k]

    @_kernel()
    def rnea1(blob, q, qd, qdd, fext, tau):
        """One state; 1 for bad sizes."""
        R = _regions(blob)
        hdr = R[0]
        nv = hdr[4]
        if q.shape[0] != hdr[3] or qd.shape[0] != nv or qdd.shape[0] != nv or \
                tau.shape[0] != nv or fext.shape[0] != hdr[0]:
            return 1
        _rnea_state(R, q, qd, qdd, fext, tau)
        return 0

    @_kernel()
    def gravity1(blob, q, fext, tau):
        """One static state (zero velocity and acceleration); 1 for bad sizes."""
        R = _regions(blob)
        hdr = R[0]
        if q.shape[0] != hdr[3] or tau.shape[0] != hdr[4] or fext.shape[0] != hdr[0]:
            return 1
        _static_state(R, q, fext, tau)
        return 0

    @_kernel()
    def body_force1(blob, q, qd, qdd, fext, static, body, out):
        """One state (static: ``qd``, ``qdd`` unused); ``out`` gets the force of ``body`` after
        the backward pass, everything beyond it included. 1 for bad sizes."""
        R = _regions(blob)
        hdr = R[0]
        nv = hdr[4]
        if q.shape[0] != hdr[3] or fext.shape[0] != hdr[0] or out.shape[0] != 6 or \
                not 0 <= body < hdr[0]:
            return 1
        if static:
            _static_state(R, q, fext, R[9])
        else:
            if qd.shape[0] != nv or qdd.shape[0] != nv:
                return 1
            _rnea_state(R, q, qd, qdd, fext, R[9])
        wb = R[6]
        for k in range(6):
            out[k] = wb[body, W_N + k]
        return 0

    @_kernel()
    def _batch(blob, q, qd, qdd, fext, tau, mode):
        """The single-state kernels over ``q (B, nq)``; ``fext`` is ``(B, nb, 6)`` or
        ``(1, nb, 6)``."""
        R = _regions(blob)
        shared = fext.shape[0] == 1
        for s in range(q.shape[0]):
            f = fext[0 if shared else s]
            if mode == MODE_STATIC:
                _static_state(R, q[s], f, tau[s])
            else:
                _rnea_state(R, q[s], qd[s], qdd[s], f, tau[s])

    @_kernel(parallel=True)
    def _batch_parallel(blobs, q, qd, qdd, fext, tau, mode):
        """:func:`_batch` split into ranges run on numba's threads, one copy of the blob (and
        so of the workspace) in each row of ``blobs``."""
        count = q.shape[0]
        chunks = blobs.shape[0]
        size = (count + chunks - 1) // chunks
        shared = fext.shape[0] == 1
        for c in prange(chunks):
            R = _regions(blobs[c])
            for s in range(c * size, min(count, (c + 1) * size)):
                f = fext[0 if shared else s]
                if mode == MODE_STATIC:
                    _static_state(R, q[s], f, tau[s])
                else:
                    _rnea_state(R, q[s], qd[s], qdd[s], f, tau[s])


#: Batches at least this large are spread over numba's threads (all cores by default; set
#: NUMBA_NUM_THREADS to limit them).
PARALLEL_BATCH = 256

#: The single-state entry points (``rnea1``, ``gravity1``, ``body_force1``) as the callers
#: reach them after :func:`warm_up`: the compiled code itself where numba exposes it, else the
#: numba dispatchers. Only inputs for which :func:`single_state_inputs` holds may reach them.
ENTRY = {}


def rnea_batch(packed, q, qd, qdd, fext, tau, mode=MODE_FULL):
    """Run the compiled RNEA on contiguous ``(B, n)`` arrays; ``fext`` ``(B or 1, nb, 6)`` in
    packed body coordinates.

    The batch works in its own copies of the workspace, so it never disturbs single calls.
    """
    threads = numba.get_num_threads()
    if threads > 1 and q.shape[0] >= PARALLEL_BATCH:
        _batch_parallel(np.tile(packed.blob, (threads, 1)), q, qd, qdd, fext, tau, mode)
    else:
        _batch(packed.blob.copy(), q, qd, qdd, fext, tau, mode)


def warm_up(packed):
    """Compile (or load from numba's on-disk cache) the single-state kernels, fill
    :data:`ENTRY` and give ``packed`` its entry points.

    The single-state entry points are compiled for float64 vectors of any strides (read, never
    written) and then frozen: in the dispatcher, anything else (a list, an integer array)
    raises ``TypeError`` at once instead of compiling a new variant in the middle of a control
    loop. The batch kernels are compiled (or loaded) by the first batch: a control loop makes
    single-state calls, and a first start should not wait for what it does not use.
    """
    vec = types.float64[::1]
    any_vec = types.Array(types.float64, 1, 'A', readonly=True)  # q, qd, qdd: only read
    forces = types.float64[:, ::1]
    signatures = {
        'rnea1': (rnea1, (vec, any_vec, any_vec, any_vec, forces, vec)),
        'gravity1': (gravity1, (vec, any_vec, forces, vec)),
        'body_force1': (body_force1, (vec, any_vec, any_vec, any_vec, forces, types.boolean,
                                      types.int64, vec)),
    }
    for name, (dispatcher, signature) in signatures.items():
        if name not in ENTRY:
            dispatcher.compile(signature)
            dispatcher.disable_compile()
            ENTRY[name] = _entry_point(dispatcher)
    # Freshly compiled, the single-state kernels exist for vectors of any strides; the batch
    # kernels call them with contiguous rows, which that version takes: compiling another
    # one for them would only make the first batch slower. (Loaded from the disk cache they
    # have no signature in this process, and the batch kernels come from the cache too.)
    for kernel in (_rnea_state, _static_state):
        if kernel.signatures:
            kernel.disable_compile()
    q = _neutral(packed)
    zero = np.zeros(packed.nv)
    tau = np.zeros(packed.nv)
    fext = np.zeros((packed.nb, 6))
    if ENTRY['rnea1'](packed.blob, q, zero, zero, fext, tau) or \
            ENTRY['gravity1'](packed.blob, q, fext, tau):
        raise RuntimeError('the compiled kernels refused a neutral state')
    packed.rnea1 = ENTRY['rnea1']
    packed.gravity1 = ENTRY['gravity1']
    packed.body_force1 = ENTRY['body_force1']


def _entry_point(dispatcher):
    """The compiled function behind a dispatcher with one signature, or the dispatcher."""
    overloads = list(getattr(dispatcher, 'overloads', {}).values())
    entry = getattr(overloads[0], 'entry_point', None) if len(overloads) == 1 else None
    return entry if callable(entry) else dispatcher


def _neutral(packed):
    """A valid configuration: zeros, with unit quaternions for spherical and floating joints."""
    q = np.zeros(packed.nq)
    nb = packed.nb
    body_ints = packed.ints[HEADER:HEADER + BODY_INTS * nb].reshape(nb, BODY_INTS)
    q_src = packed.ints[HEADER + BODY_INTS * nb:]
    for jt, q_start in body_ints[:, 1:3]:
        if jt in (3, 4):
            q[q_src[q_start + (6 if jt == 4 else 3)]] = 1.0
    return q
