"""
Compiled RNEA and equations of motion: the reference algorithms on a packed model, with numba.

The reference implementations are :mod:`rbd_dynamics.dynamics` and :mod:`rbd_dynamics.eom`.

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

The equations of motion (mass matrix, Coriolis matrix, regressor) work in world (root link)
coordinates instead, as Pinocchio does: there the motion subspace column of a joint is the same
for every body beyond it and composite inertias are plain sums, so each entry is a dot product
(see the kernels' section). The Jacobian walks from its link to the root in link coordinates.

Packed layout: one float64 array ``blob`` per model (offsets computed by :class:`PackedModel`).
It starts with integers, stored as int64 bit patterns: their count, a header ``[nb, nqf, nvf,
nq, nv]``, per body ``[parent, jtype, q_start, v_start]``, ``q_src`` (nqf), ``v_src`` (nvf),
per full velocity the column before it on the way to the root (``column_parent``, -1 at the
root: the columns of a multi-DoF joint in a row, then the parent body's last) and its body
(``column_body``), and the ``len(REGIONS) + 1`` offsets of the float regions, which are (in
the order of :data:`REGIONS`; columns named by the ``MAP_``, ``B_``, ``IN_``, ``W_``, ``P_``,
``C_`` and ``L_`` constants):

- maps: gravity (3), ``q_mult``, ``q_off`` (nqf each), ``v_mult`` (nvf);
- body ``(nb, BODY_FLOATS)``: tree rotation ``Et`` row-major, tree translation ``rt``, ``sa``,
  ``sl``, for multi-DoF joints the axis and the planar axes e1 and e2, and ``Q`` row-major;
- inertia ``(nb, 10)``: mass, ``h`` (3), rotational inertia about the origin (xx, xy, xz, yy,
  yz, zz);
- work ``(nb, WORK_FLOATS)``: ``E``, ``r``, ``w``, ``v``, angular and linear acceleration,
  ``n``, ``f``;
- subspace ``(nvf, 6)``: motion subspace columns of multi-DoF joints;
- scratch: ``qf`` (nqf), ``vf``, ``af``, ``tauf`` (nvf each);
- zero_v: ``nv`` zeros;
- spare: ``nv`` torques that :func:`body_force1` computes and nobody reads;
- pose ``(nb, POSE_FLOATS)``: the equations of motion's workspace per body, in world (root
  link) coordinates: pose, velocity, composite inertia and composite ``B``;
- column ``(nvf, COLUMN_FLOATS)``: the motion subspace columns in world coordinates and their
  rates of change;
- links ``(number of links, LINK_FLOATS)``: each link's body and its frame in the packed body
  coordinates (for :func:`jacobian1`), in the order of ``model.link_names``;
- forces ``(10, 6)``: the regressor's world force of each inertial parameter of one body.

Per-body data sits in 2-D arrays read with constant column indices: numba then has no negative
index to correct on each access, which halves the cost of a body. One argument for the whole
model keeps a call short: each array argument costs the call some time. Every compiled function
here is built without numba's reference-counting runtime (they only read and write arrays they
are given), which makes passing an array much cheaper still. The single-state entry points check
sizes themselves and return a status, :data:`OK` or :data:`BAD_SIZES`; after :func:`warm_up`
the callers reach the compiled code through the packed model's ``rnea1``, ``gravity1``,
``body_force1``, ``mass1``, ``coriolis1``, ``jacobian1`` and ``regressor1`` (the :data:`ENTRY`
functions) directly, without numba's type dispatch, so they pass only what
:func:`single_state_forces` accepts (the equations of motion: float64 vectors and a writable
C-contiguous float64 result, :mod:`rbd_dynamics.eom` checks them).

:func:`decode` is the one reader of this layout (:func:`decode_eom` of the equations of motion's
part, which the RNEA's kernels do not build): :class:`PackedModel` names its views with it,
and the kernels (where it is compiled inline) read the model through the :class:`Layout` it
returns. Compiled, its 2-D views are made by :func:`rows` without numba's ``reshape`` (a call
into numba's helpers that the optimiser must keep even for a view the kernel never reads).

The compiled functions are cached on disk by numba; :func:`warm_up` compiles (or loads) all of
them, the batch kernels included, before a model puts its packed model in use.
Set ``RBD_DYNAMICS_DISABLE_JIT=1`` to use the NumPy reference everywhere.
"""

import collections
import copy
import os
import re
import threading
import types as types_module

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


#: The oldest numba that compiles the equations of motion's kernels (:func:`warm_up_eom`). Older
#: ones (Ubuntu 22.04's 0.55, under Humble) spend over five minutes of CPU on them, against
#: about twenty seconds for numba 0.68; there :mod:`rbd_dynamics.eom` runs its NumPy reference,
#: and the RNEA stays compiled.
EOM_MIN_NUMBA = (0, 57)


def _version(text):
    """Return ``(major, minor)`` of a version string such as ``'0.68.1'``."""
    numbers = re.findall(r'\d+', text)[:2]
    return tuple(int(n) for n in numbers) if len(numbers) == 2 else (0, 0)


#: Whether the equations of motion are compiled (see :data:`EOM_MIN_NUMBA`).
EOM_AVAILABLE = AVAILABLE and _version(numba.__version__) >= EOM_MIN_NUMBA


def numpy_path_note():
    """Return the note a program shows when the compiled path is unavailable, else ``''``."""
    if AVAILABLE:
        return ''
    return ('numba not available (%s): NumPy path, about %d times slower'
            % (UNAVAILABLE_REASON, NUMPY_PATH_SLOWDOWN))


# Joint-type codes of the packed model. The 1-DoF types come first: they move along / about
# the body's z axis.
JT_REVOLUTE = 0  # revolute and continuous
JT_PRISMATIC = 1
JT_HELICAL = 2
JT_SPHERICAL = 3  # q = quaternion [x y z w]
JT_FLOATING = 4  # q = [x y z] then quaternion [x y z w]
JT_PLANAR = 5  # q = [x y theta]
ONE_DOF = JT_HELICAL  # codes up to this one are 1-DoF
JTYPE_CODES = {'revolute': JT_REVOLUTE, 'continuous': JT_REVOLUTE, 'prismatic': JT_PRISMATIC,
               'helical': JT_HELICAL, 'spherical': JT_SPHERICAL, 'floating': JT_FLOATING,
               'planar': JT_PLANAR}
FLOATING_QUATERNION = 3  # where the quaternion starts in the q of a floating joint
QUATERNION_W = 3  # w in [x y z w]
# Integers at the start of the blob: the header, then one row per body.
H_NB, H_NQF, H_NVF, H_NQ, H_NV = range(5)
HEADER = 5
BI_PARENT, BI_JTYPE, BI_Q_START, BI_V_START = range(4)
BODY_INTS = 4
# The float regions, in blob order; the integers end with the len(REGIONS) + 1 offsets that
# bound them.
REGIONS = ('maps', 'body', 'inertia', 'work', 'subspace', 'scratch', 'zero_v', 'spare', 'pose',
           'column', 'links', 'forces')
N_OFFSETS = len(REGIONS) + 1
R_MAPS = REGIONS.index('maps')
R_BODY = REGIONS.index('body')
R_INERTIA = REGIONS.index('inertia')
R_WORK = REGIONS.index('work')
R_SUBSPACE = REGIONS.index('subspace')
R_SCRATCH = REGIONS.index('scratch')
R_ZERO_V = REGIONS.index('zero_v')
R_SPARE = REGIONS.index('spare')
R_POSE = REGIONS.index('pose')
R_COLUMN = REGIONS.index('column')
R_LINKS = REGIONS.index('links')
R_FORCES = REGIONS.index('forces')
# maps: gravity (3), then q_mult, q_off (nqf each), v_mult (nvf)
MAP_GRAVITY = 0
MAP_Q_MULT = 3
# body columns: tree rotation Et (row-major) and translation rt, S of 1-DoF joints, axes of
# multi-DoF joints, the rotation Q (row-major) from packed to model body coordinates
B_ET, B_RT, B_SA, B_SL, B_AXIS, B_E1, B_E2, B_Q = 0, 9, 12, 13, 14, 17, 20, 23
BODY_FLOATS = 32
# inertia columns: mass, h = m c, rotational inertia about the origin (xx, xy, xz, yy, yz, zz)
IN_MASS, IN_H, IN_ROT = 0, 1, 4
INERTIA_FLOATS = 10
# work columns: E (row-major), r, velocity w and v, acceleration (angular, linear), force n, f
W_E, W_R, W_W, W_V, W_AW, W_AL, W_N, W_F = 0, 9, 12, 15, 18, 21, 24, 27
WORK_FLOATS = 30
# pose columns (equations of motion, world coordinates): E0 (row-major, world -> packed body
# axes), r0 (body origin), velocity w and v, composite inertia (the inertia columns: mass, h,
# rotational inertia about the world origin) and composite B (see _world_b: its symmetric part
# xx, xy, xz, yy, yz, zz, then the vectors n / 2, beta, gamma)
P_E0, P_R0, P_W, P_V, P_IC, P_BC = 0, 9, 12, 15, 18, 28
B_FLOATS = 15
POSE_FLOATS = P_BC + B_FLOATS
# column columns: a joint's motion subspace column S and its rate of change, world coordinates
C_S, C_SD = 0, 6
COLUMN_FLOATS = 12
# links columns: the body of the link (-1: the base), then the transform from packed body
# coordinates to the link's, E (row-major) and r
L_BODY, L_E, L_R = 0, 1, 10
LINK_FLOATS = 13
# what an equations-of-motion batch computes
EOM_MASS, EOM_CORIOLIS, EOM_JACOBIAN, EOM_REGRESSOR = range(4)
#: The equations of motion's single-state entry points (see warm_up_eom).
EOM_ENTRIES = ('mass1', 'coriolis1', 'jacobian1', 'regressor1')
MODE_FULL = 0
MODE_STATIC = 1
#: Status of the single-state entry points: done.
OK = 0
#: Status of the single-state entry points: an array does not have the model's size (nothing
#: computed; the general path then reports which).
BAD_SIZES = 1
_EYE3 = np.eye(3)
_F8 = np.dtype(np.float64)
#: public ``[force, torque]`` <-> Featherstone ``[n, f]`` (its own inverse)
SWAP = np.block([[np.zeros((3, 3)), _EYE3], [_EYE3, np.zeros((3, 3))]])

#: The named views of a blob (see :func:`decode`).
Layout = collections.namedtuple('Layout', (
    'header', 'body_ints', 'q_src', 'v_src', 'gravity', 'q_mult', 'q_off', 'v_mult', 'body',
    'inertia', 'work', 'subspace', 'qf', 'vf', 'af', 'tauf', 'zero_v', 'spare'))
#: The named views of the equations of motion's part of a blob (see :func:`decode_eom`).
EomLayout = collections.namedtuple('EomLayout', (
    'column_parent', 'column_body', 'pose', 'column', 'links', 'forces'))


def rows(flat, count, width):
    """
    Return ``flat`` (1-D, contiguous) as ``(count, width)`` rows: a view.

    In Python, ``reshape``. Compiled (``_rows_view``), a view made on the spot: numba's
    ``reshape`` calls a helper of its runtime that the optimiser must keep, about 10 ns per
    view a call builds even where the view goes unused.
    """
    return flat.reshape((count, width))


def decode(blob):
    """
    Return the :class:`Layout` of ``blob``: views, nothing copied.

    The reader of the packed layout (with :func:`decode_eom` for the equations of motion's
    part), for the Python side and (compiled inline) for the kernels.
    """
    bits = blob.view(np.int64)
    n = bits[0]
    ints = bits[1:1 + n]
    o = n - N_OFFSETS
    nb = ints[H_NB]
    nqf = ints[H_NQF]
    nvf = ints[H_NVF]
    b = HEADER + BODY_INTS * nb
    maps = blob[ints[o + R_MAPS]:ints[o + R_MAPS + 1]]
    scratch = blob[ints[o + R_SCRATCH]:ints[o + R_SCRATCH + 1]]
    return Layout(
        ints[:HEADER], rows(ints[HEADER:b], nb, BODY_INTS), ints[b:b + nqf],
        ints[b + nqf:b + nqf + nvf],
        maps[MAP_GRAVITY:MAP_GRAVITY + 3], maps[MAP_Q_MULT:MAP_Q_MULT + nqf],
        maps[MAP_Q_MULT + nqf:MAP_Q_MULT + 2 * nqf],
        maps[MAP_Q_MULT + 2 * nqf:MAP_Q_MULT + 2 * nqf + nvf],
        rows(blob[ints[o + R_BODY]:ints[o + R_BODY + 1]], nb, BODY_FLOATS),
        rows(blob[ints[o + R_INERTIA]:ints[o + R_INERTIA + 1]], nb, INERTIA_FLOATS),
        rows(blob[ints[o + R_WORK]:ints[o + R_WORK + 1]], nb, WORK_FLOATS),
        rows(blob[ints[o + R_SUBSPACE]:ints[o + R_SUBSPACE + 1]], nvf, 6),
        scratch[:nqf], scratch[nqf:nqf + nvf], scratch[nqf + nvf:nqf + 2 * nvf],
        scratch[nqf + 2 * nvf:nqf + 3 * nvf],
        blob[ints[o + R_ZERO_V]:ints[o + R_ZERO_V + 1]],
        blob[ints[o + R_SPARE]:ints[o + R_SPARE + 1]])


def decode_eom(blob):
    """
    Return the :class:`EomLayout` of ``blob``: views, nothing copied.

    Apart from :func:`decode`, whose views every RNEA call builds: each view costs the call a
    little, and the RNEA's kernels need none of these.
    """
    bits = blob.view(np.int64)
    n = bits[0]
    ints = bits[1:1 + n]
    o = n - N_OFFSETS
    nb = ints[H_NB]
    nqf = ints[H_NQF]
    nvf = ints[H_NVF]
    b = HEADER + BODY_INTS * nb + nqf + nvf
    return EomLayout(
        ints[b:b + nvf], ints[b + nvf:b + 2 * nvf],
        rows(blob[ints[o + R_POSE]:ints[o + R_POSE + 1]], nb, POSE_FLOATS),
        rows(blob[ints[o + R_COLUMN]:ints[o + R_COLUMN + 1]], nvf, COLUMN_FLOATS),
        rows(blob[ints[o + R_LINKS]:ints[o + R_LINKS + 1]],
             (ints[o + R_LINKS + 1] - ints[o + R_LINKS]) // LINK_FLOATS, LINK_FLOATS),
        rows(blob[ints[o + R_FORCES]:ints[o + R_FORCES + 1]], INERTIA_FLOATS, 6))


def z_to_axis(axis):
    """
    Return the rotation ``Q`` (3x3) that turns z onto the unit vector ``axis``.

    Identity for z, half a turn about x for -z, the smallest turn otherwise.
    """
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
    """
    Flat arrays of a :class:`~rbd_dynamics.model.Model` for the compiled kernels.

    Attributes
    ----------
    blob
        the packed model and its workspace.
    layout
        the :class:`Layout` (named views) of ``blob``; each of its fields is also an
        attribute (``zero_v``: ``(nv,)`` zeros, ``inertia``: ``(nb, 10)``, ...).
    rotation
        ``(nb, 3, 3)`` ``Q`` of each body: model body coordinates = ``Q`` packed ones.
    link_wrench_to_body
        link -> ``(6, 6)`` map of a public wrench (force first, link
        coordinates) to a body force in packed body coordinates, for links on moving bodies.
    zero_fext
        ``(nb, 6)`` zeros, never written: no external force.
    source_inertia
        the ``(nb, 6, 6)`` inertias packed into ``blob`` (model body coordinates).
    link_body
        the model's link -> body map (for :func:`single_state_forces`).
    rnea1, gravity1, body_force1, mass1, coriolis1, jacobian1, regressor1
        the single-state entry points (:data:`ENTRY`), ``None`` until :meth:`bind_entry_points`
        (which :func:`warm_up` calls), the equations of motion's a stub that compiles them
        until :func:`warm_up_eom`; they return :data:`OK` or :data:`BAD_SIZES`.
    link_index
        link -> its row in the ``links`` region.
    world_jacobian_code
        link -> the ``code`` of :func:`jacobian1` in world axes (the common call: one lookup).
    jacobian_code
        ``(link, frame)`` -> the ``code`` of :func:`jacobian1`: twice the link's row, plus
        one for ``'local'``.
    square_shape, jacobian_shape, regressor_shape
        the shapes of one state's ``M`` and ``C``, ``J`` and ``Y``.

    """

    #: the equations of motion use this packed model (:data:`EOM_AVAILABLE`)
    eom_compiled = EOM_AVAILABLE
    # Slots: the single-state calls read a few attributes around a microsecond of kernel, and
    # a slot is the quickest attribute there is.
    __slots__ = ('nb', 'nqf', 'nvf', 'nq', 'nv', 'rotation', 'link_body', 'link_wrench_to_body',
                 'link_index', 'jacobian_code', 'world_jacobian_code', 'blob', 'layout',
                 'source_inertia', 'zero_fext',
                 'rnea1', 'gravity1', 'body_force1', 'mass1', 'coriolis1', 'jacobian1',
                 'regressor1', 'square_shape', 'jacobian_shape',
                 'regressor_shape', 'eom_layout') + Layout._fields + EomLayout._fields

    def __init__(self, model, inertia=None):
        """
        Pack ``model``, with ``inertia`` (``(nb, 6, 6)``) instead of ``model.inertia``.

        The entry points stay ``None`` until :func:`warm_up`.
        """
        if inertia is None:
            inertia = model.inertia
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
            body[i, B_ET:B_ET + 9] = (rotation[i].T @ E @ Qp).reshape(9)
            body[i, B_RT:B_RT + 3] = Qp.T @ r
            body[i, B_Q:B_Q + 9] = rotation[i].reshape(9)
            code = codes[i]
            if code <= ONE_DOF:
                body[i, B_SA] = 0.0 if code == JT_PRISMATIC else 1.0
                body[i, B_SL] = {JT_REVOLUTE: 0.0, JT_PRISMATIC: 1.0,
                                 JT_HELICAL: joint.pitch}[code]
            else:
                body[i, B_AXIS:B_AXIS + 3] = joint.axis
                if code == JT_PLANAR:
                    body[i, B_E1:B_E1 + 3] = joint._plane[:, 0]
                    body[i, B_E2:B_E2 + 3] = joint._plane[:, 1]
        self.rotation = rotation
        self.link_body = model.link_body
        self.link_wrench_to_body = {
            link: _rot6(rotation[b].T) @ model.link_force_to_body[link] @ SWAP
            for link, b in model.link_body.items() if b >= 0}
        self.link_index = {link: k for k, link in enumerate(model.link_names)}
        self.jacobian_code = {(link, frame): 2 * k + local for link, k in self.link_index.items()
                              for local, frame in enumerate(('world', 'local'))}
        self.world_jacobian_code = {link: 2 * k for link, k in self.link_index.items()}
        links = np.zeros((len(model.link_names), LINK_FLOATS))
        for k, link in enumerate(model.link_names):
            b = model.link_body[link]
            links[k, L_BODY] = b
            if b >= 0:
                # link_X_packed = rot(E) xlt(r) rot(Q) = rot(E Q) xlt(Q^T r)
                X = model.link_X[link]
                E = X[:3, :3]
                rx = -E.T @ X[3:, :3]
                r = np.array((rx[2, 1], rx[0, 2], rx[1, 0]))
                links[k, L_E:L_E + 9] = (E @ rotation[b]).reshape(9)
                links[k, L_R:L_R + 3] = rotation[b].T @ r

        header = np.zeros(HEADER, dtype=np.int64)
        header[[H_NB, H_NQF, H_NVF, H_NQ, H_NV]] = nb, nqf, nvf, model.nq, model.nv
        body_ints = np.zeros((nb, BODY_INTS), dtype=np.int64)
        body_ints[:, [BI_PARENT, BI_JTYPE, BI_Q_START, BI_V_START]] = np.stack(
            (model.parent, codes, model.q_start, model.v_start), axis=-1)
        column_parent = np.empty(nvf, dtype=np.int64)
        column_body = np.empty(nvf, dtype=np.int64)
        for i, joint in enumerate(model.joints):
            start = model.v_start[i]
            p = model.parent[i]
            column_body[start:start + joint.nv] = i
            column_parent[start:start + joint.nv] = np.arange(start - 1, start + joint.nv - 1)
            column_parent[start] = -1 if p < 0 else model.v_start[p] + model.joints[p].nv - 1
        ints = np.concatenate((header, body_ints.reshape(-1), model.q_src, model.v_src,
                               column_parent, column_body))
        sizes = {'maps': MAP_Q_MULT + 2 * nqf + nvf, 'body': BODY_FLOATS * nb,
                 'inertia': INERTIA_FLOATS * nb, 'work': WORK_FLOATS * nb, 'subspace': 6 * nvf,
                 'scratch': nqf + 3 * nvf, 'zero_v': model.nv, 'spare': model.nv,
                 'pose': POSE_FLOATS * nb, 'column': COLUMN_FLOATS * nvf,
                 'links': LINK_FLOATS * len(links), 'forces': INERTIA_FLOATS * 6}
        # The whole model lives in one float64 array (the integers as the bit patterns of
        # int64 at its start), so a call passes a single model argument.
        n_ints = len(ints) + N_OFFSETS
        offsets = 1 + n_ints + np.cumsum([0] + [sizes[name] for name in REGIONS])
        self.blob = np.zeros(offsets[-1])
        self.blob.view(np.int64)[0] = n_ints
        self.blob.view(np.int64)[1:1 + n_ints] = np.concatenate((ints, offsets))
        self._views()
        self.gravity[...] = model.gravity
        self.q_mult[...] = model.q_mult
        self.q_off[...] = model.q_off
        self.v_mult[...] = model.v_mult
        self.body[...] = body
        self.links[...] = links
        self.inertia[...] = self.pack_inertia(inertia)
        self.source_inertia = inertia
        self.zero_fext = np.zeros((nb, 6))
        self.rnea1 = self.gravity1 = self.body_force1 = None
        self._bind_eom()
        # the shapes of the equations of motion's single-state results
        self.square_shape = (model.nv, model.nv)
        self.jacobian_shape = (6, model.nv)
        self.regressor_shape = (model.nv, INERTIA_FLOATS * nb)

    def bind_entry_points(self):
        """Take the compiled single-state entry points of :data:`ENTRY` (after warm_up)."""
        self.rnea1 = ENTRY['rnea1']
        self.gravity1 = ENTRY['gravity1']
        self.body_force1 = ENTRY['body_force1']
        self._bind_eom()

    def _bind_eom(self):
        """Take the equations of motion's entry points, or stubs that compile them first."""
        for name in EOM_ENTRIES:
            setattr(self, name, ENTRY[name] if name in ENTRY else _CompileFirst(self, name))

    def _views(self):
        """Name the views of ``blob``: ``layout`` and an attribute for each of its fields."""
        self.layout = decode(self.blob)
        for name, view in zip(Layout._fields, self.layout):
            setattr(self, name, view)
        self.eom_layout = decode_eom(self.blob)
        for name, view in zip(EomLayout._fields, self.eom_layout):
            setattr(self, name, view)

    def pack_inertia(self, inertia):
        """
        Pack ``(nb, 6, 6)`` spatial inertias into ``(nb, 10)`` rows.

        The inertias are in model body coordinates; each row holds the mass, ``h = m c`` and
        the rotational inertia at the origin, in packed body coordinates.
        """
        out = np.zeros((inertia.shape[0], INERTIA_FLOATS))
        for i, Q in enumerate(self.rotation):
            R = _rot6(Q)
            packed = R.T @ inertia[i] @ R
            out[i, IN_MASS] = packed[3, 3]
            # the upper-right block is [h]x
            out[i, IN_H:IN_H + 3] = packed[2, 4], packed[0, 5], packed[1, 3]
            out[i, IN_ROT:IN_ROT + 6] = packed[0, 0], packed[0, 1], packed[0, 2], \
                packed[1, 1], packed[1, 2], packed[2, 2]
        return out

    def with_inertia(self, inertia):
        """
        Return a copy with other inertias and its own workspace.

        ``inertia``: ``(nb, 6, 6)``, model body coordinates. The copy keeps the entry points.
        """
        other = copy.copy(self)
        other.blob = self.blob.copy()
        other._views()
        other._bind_eom()
        other.inertia[...] = self.pack_inertia(inertia)
        other.source_inertia = inertia
        return other

    def forces_in(self, fext):
        """``(..., nb, 6)`` body forces in model body coordinates -> packed ones (contiguous)."""
        out = np.empty(fext.shape)
        out[..., :3] = np.einsum('bji,...bj->...bi', self.rotation, fext[..., :3])
        out[..., 3:] = np.einsum('bji,...bj->...bi', self.rotation, fext[..., 3:])
        return out


def single_state_forces(packed, f_ext, q, qd=None, qdd=None):
    """
    Return the external forces of a single-state entry point call, or ``None``.

    The one gate of the single-state entry points: they skip numba's type checks, so only
    float64 vectors (any strides; ``qd``, ``qdd`` may be ``None``: unused) may reach them, and
    ``f_ext`` must be ``None``/empty or a dict of ``(6,)`` float arrays on links of the model.
    For those inputs the result is the ``(nb, 6)`` body forces in packed body coordinates (the
    shared zeros without ``f_ext``); for anything else ``None``: the caller then takes the
    general path, which converts, validates and reports errors. Sizes are left to the kernels
    (:data:`BAD_SIZES`).
    """
    try:
        if not (q.dtype is _F8 and q.ndim == 1
                and (qd is None or (qd.dtype is _F8 and qd.ndim == 1))
                and (qdd is None or (qdd.dtype is _F8 and qdd.ndim == 1))):
            return None
    except AttributeError:  # not an array
        return None
    if not f_ext:
        return packed.zero_fext
    out = np.zeros((packed.nb, 6))
    to_body = packed.link_wrench_to_body
    link_body = packed.link_body
    for link, wrench in f_ext.items():
        body = link_body.get(link)
        if body is None or wrench.__class__ is not np.ndarray or wrench.shape != (6,) or \
                wrench.dtype is not _F8:
            return None
        if body >= 0:  # (on the base it is carried by the world: no joint torque)
            out[body] += to_body[link] @ wrench
    return out


def _kernel(**options):
    """
    Compile a kernel the one way every function here is compiled.

    ``njit``, cached, and without numba's reference-counting runtime where this numba
    version can leave it out: a function that two kinds of caller share would otherwise be
    cached for one kind and loaded for the other.
    """
    try:
        return njit(cache=True, _nrt=False, **options)
    except (KeyError, TypeError):  # pragma: no cover - numba without that option
        return njit(cache=True, **options)


if AVAILABLE:
    from numba.core import cgutils
    from numba.core.imputils import impl_ret_borrowed
    from numba.extending import intrinsic
    from numba.np.arrayobj import make_array, populate_array

    @intrinsic
    def _rows_view(typingctx, flat, count, width):
        """Compiled :func:`rows`: the view's shape and strides set directly (no helper)."""
        if not (isinstance(flat, types.Array) and flat.ndim == 1 and flat.layout == 'C'):
            return None
        result = flat.copy(ndim=2, layout='C')

        def codegen(context, builder, signature, args):
            src = make_array(signature.args[0])(context, builder, args[0])
            dst = make_array(signature.return_type)(context, builder)
            count = context.cast(builder, args[1], signature.args[1], types.intp)
            width = context.cast(builder, args[2], signature.args[2], types.intp)
            itemsize = src.itemsize
            populate_array(dst, data=src.data, shape=cgutils.pack_array(builder, [count, width]),
                           strides=cgutils.pack_array(builder, [builder.mul(width, itemsize),
                                                                itemsize]),
                           itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
            # a view: a new reference to the source's memory where numba counts references
            # (the kernels are built without that runtime where numba can leave it out)
            return impl_ret_borrowed(context, builder, signature.return_type, dst._getvalue())

        return result(flat, count, width), codegen

    def _compiled_reader(reader):
        """
        Compile the layout reader ``reader`` (inlined) with :func:`rows` as ``_rows_view``.

        numba takes a function's globals as constants: a copy of ``reader`` with that one
        global swapped (an overload of :func:`rows` would be compiled apart, where the build
        without the runtime refuses to return a view it made).
        """
        return _kernel(inline='always')(types_module.FunctionType(
            reader.__code__, dict(globals(), rows=_rows_view), reader.__name__))

    _decode = _compiled_reader(decode)
    _decode_eom = _compiled_reader(decode_eom)

    # 3-D vectors and matrices as tuples of scalars: numba keeps them in registers. A 3x3
    # matrix is a 9-tuple, row-major.

    @_kernel(inline='always')
    def _row3(a, i, col):
        """``a[i, col:col + 3]``."""
        return a[i, col], a[i, col + 1], a[i, col + 2]

    @_kernel(inline='always')
    def _row9(a, i, col):
        """``a[i, col:col + 9]``: a 3x3 matrix."""
        return (a[i, col], a[i, col + 1], a[i, col + 2], a[i, col + 3], a[i, col + 4],
                a[i, col + 5], a[i, col + 6], a[i, col + 7], a[i, col + 8])

    @_kernel(inline='always')
    def _put3(a, i, col, x):
        """``a[i, col:col + 3] = x``."""
        a[i, col] = x[0]
        a[i, col + 1] = x[1]
        a[i, col + 2] = x[2]

    @_kernel(inline='always')
    def _put9(a, i, col, x):
        """``a[i, col:col + 9] = x``."""
        for k in range(3):
            _put3(a, i, col + 3 * k, (x[3 * k], x[3 * k + 1], x[3 * k + 2]))

    @_kernel(inline='always')
    def _add(x, y):
        return x[0] + y[0], x[1] + y[1], x[2] + y[2]

    @_kernel(inline='always')
    def _sub(x, y):
        return x[0] - y[0], x[1] - y[1], x[2] - y[2]

    @_kernel(inline='always')
    def _scale(s, x):
        return s * x[0], s * x[1], s * x[2]

    @_kernel(inline='always')
    def _dot(x, y):
        return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]

    @_kernel(inline='always')
    def _cross(x, y):
        return x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]

    @_kernel(inline='always')
    def _rotate(E, x):
        """``E x``."""
        return (E[0] * x[0] + E[1] * x[1] + E[2] * x[2],
                E[3] * x[0] + E[4] * x[1] + E[5] * x[2],
                E[6] * x[0] + E[7] * x[1] + E[8] * x[2])

    @_kernel(inline='always')
    def _rotate_t(E, x):
        """``E^T x``."""
        return (E[0] * x[0] + E[3] * x[1] + E[6] * x[2],
                E[1] * x[0] + E[4] * x[1] + E[7] * x[2],
                E[2] * x[0] + E[5] * x[1] + E[8] * x[2])

    @_kernel(inline='always')
    def _matmul(A, B):
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

    @_kernel(inline='always')
    def _motion_transform(E, r, w, v):
        """``X m = (E w, E (v - r x w))`` (Eq. 2.24)."""
        return _rotate(E, w), _rotate(E, _sub(v, _cross(r, w)))

    @_kernel(inline='always')
    def _transpose_force_transform(E, r, n, f):
        """
        Transform a force of the child frame to the parent frame (Eq. 2.25).

        ``X^T f = (E^T n + r x E^T f, E^T f)``: a force of the child frame in the parent
        frame (Eq. 2.25).
        """
        g = _rotate_t(E, f)
        return _add(_rotate_t(E, n), _cross(r, g)), g

    @_kernel(inline='always')
    def _motion_cross(w, v, mw, mv):
        """``v x m = (w x mw, w x mv + v x mw)`` (Eq. 2.31)."""
        return _cross(w, mw), _add(_cross(w, mv), _cross(v, mw))

    @_kernel(inline='always')
    def _force_cross(w, v, n, f):
        """``v x* f = (w x n + v x f, w x f)`` (Eq. 2.32)."""
        return _add(_cross(w, n), _cross(v, f)), _cross(w, f)

    @_kernel(inline='always')
    def _inertia_product(inertia, i, w, v):
        """
        Multiply a motion by the spatial inertia of body ``i`` (Eq. 2.63).

        ``I m = (Ibar w + h x v, m v - h x w)`` for the inertia of body ``i``: mass ``m``,
        ``h = m c`` and ``Ibar`` about the body origin (Eq. 2.63).
        """
        m = inertia[i, IN_MASS]
        h = _row3(inertia, i, IN_H)
        xx, xy, xz, yy, yz, zz = (inertia[i, IN_ROT], inertia[i, IN_ROT + 1],
                                  inertia[i, IN_ROT + 2], inertia[i, IN_ROT + 3],
                                  inertia[i, IN_ROT + 4], inertia[i, IN_ROT + 5])
        ibar_w = (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2],
                  xz * w[0] + yz * w[1] + zz * w[2])
        return _add(ibar_w, _cross(h, v)), _sub(_scale(m, v), _cross(h, w))

    @_kernel(inline='always')
    def _subspace_product(S, vi, nj, x):
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

    # Joint models (jcalc): the transform of each body from its parent, E = EJ Et and
    # r = rt + Et^T rJ, with the tree part Et, rt from the body columns.

    @_kernel()
    def _axis_rotation(angle, axis):
        """
        Return the coordinate transform of a turn about a unit axis.

        ``R(axis, angle)^T``: the rotation of a turn by ``angle`` about the unit ``axis``,
        as a coordinate transform.
        """
        ax, ay, az = axis
        c = np.cos(angle)
        s = np.sin(angle)
        t = 1.0 - c
        return (c + t * ax * ax, t * ax * ay + s * az, t * ax * az - s * ay,
                t * ax * ay - s * az, c + t * ay * ay, t * ay * az + s * ax,
                t * ax * az + s * ay, t * ay * az - s * ax, c + t * az * az)

    @_kernel()
    def _quaternion_rotation(x, y, z, qw):
        """``R(quaternion [x y z w])^T`` (the quaternion need not be normalised)."""
        n = np.sqrt(x * x + y * y + z * z + qw * qw)
        if not n > 1e-9:
            raise ValueError('quaternion [x, y, z, w] must have a finite, non-zero norm')
        x /= n
        y /= n
        z /= n
        qw /= n
        return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + z * qw), 2.0 * (x * z - y * qw),
                2.0 * (x * y - z * qw), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + x * qw),
                2.0 * (x * z + y * qw), 2.0 * (y * z - x * qw), 1.0 - 2.0 * (x * x + y * y))

    @_kernel(inline='always')
    def _one_dof_transform(body, i, jt, x):
        """
        Return ``E``, ``r`` of a body whose 1-DoF joint moves about / along z.

        ``E``, ``r`` of body ``i``, whose joint moves about / along z by ``x``:
        ``E = Rz(x)^T Et`` (two rows turn), ``r = rt + Et^T z sl x``.
        """
        Et = _row9(body, i, B_ET)
        rt = _row3(body, i, B_RT)
        if jt == JT_PRISMATIC:
            E = Et
        else:
            c = np.cos(x)
            s = np.sin(x)
            E = (c * Et[0] + s * Et[3], c * Et[1] + s * Et[4], c * Et[2] + s * Et[5],
                 c * Et[3] - s * Et[0], c * Et[4] - s * Et[1], c * Et[5] - s * Et[2],
                 Et[6], Et[7], Et[8])
        if jt == JT_REVOLUTE:
            r = rt
        else:
            r = _add(rt, _scale(body[i, B_SL] * x, (Et[6], Et[7], Et[8])))
        return E, r

    @_kernel()
    def _multi_dof_transform(body, S, i, jt, qf, qi, vi):
        """
        Return ``E``, ``r`` and the motion subspace of a multi-DoF joint.

        ``E``, ``r`` and the number of columns of ``S`` of body ``i``, whose spherical,
        floating or planar joint has coordinates ``qf[qi:]``; writes those columns into rows
        ``vi...`` of ``S``.
        """
        zero = (0.0, 0.0, 0.0)
        if jt == JT_PLANAR:  # q = [x y theta]: along e1, along e2, about the axis
            axis = _row3(body, i, B_AXIS)
            e1 = _row3(body, i, B_E1)
            e2 = _row3(body, i, B_E2)
            EJ = _axis_rotation(qf[qi + 2], axis)
            rJ = _add(_scale(qf[qi], e1), _scale(qf[qi + 1], e2))
            _put3(S, vi, 0, zero)
            _put3(S, vi, 3, _rotate(EJ, e1))
            _put3(S, vi + 1, 0, zero)
            _put3(S, vi + 1, 3, _rotate(EJ, e2))
            _put3(S, vi + 2, 0, axis)
            _put3(S, vi + 2, 3, zero)
            nj = 3
        else:
            qo = qi + FLOATING_QUATERNION if jt == JT_FLOATING else qi
            EJ = _quaternion_rotation(qf[qo], qf[qo + 1], qf[qo + 2], qf[qo + 3])
            nj = 6 if jt == JT_FLOATING else 3
            for k in range(nj):
                for c in range(6):
                    S[vi + k, c] = 0.0
            if jt == JT_FLOATING:  # qd = [v; w] of the child frame
                rJ = (qf[qi], qf[qi + 1], qf[qi + 2])
                for k in range(3):
                    S[vi + k, 3 + k] = 1.0
                    S[vi + 3 + k, k] = 1.0
            else:  # qd = w
                rJ = zero
                for k in range(3):
                    S[vi + k, k] = 1.0
        Et = _row9(body, i, B_ET)
        return _matmul(EJ, Et), _add(_row3(body, i, B_RT), _rotate_t(Et, rJ)), nj

    # RNEA (Table 5.1), one state at a time on the named views of a blob.

    @_kernel(inline='always')
    def _positions(layout, q):
        """``qf``: a coordinate per body joint coordinate (mimic joints follow their masters)."""
        qf, src, mult, off = layout.qf, layout.q_src, layout.q_mult, layout.q_off
        for k in range(qf.shape[0]):
            qf[k] = q[src[k]] * mult[k] + off[k]

    @_kernel(inline='always')
    def _rates(layout, qd, qdd):
        """``vf``, ``af``: a velocity and an acceleration per body joint velocity."""
        vf, af, src, mult = layout.vf, layout.af, layout.v_src, layout.v_mult
        for k in range(vf.shape[0]):
            vf[k] = qd[src[k]] * mult[k]
            af[k] = qdd[src[k]] * mult[k]

    @_kernel(inline='always')
    def _joint_transform(layout, i):
        """
        Return ``E``, ``r`` of body ``i`` and the number of its joint's velocities.

        ``E`` and ``r`` are also stored in the work row for the backward pass; ``S`` of a
        multi-DoF joint is written.
        """
        bi = layout.body_ints
        jt = bi[i, BI_JTYPE]
        if jt <= ONE_DOF:
            E, r = _one_dof_transform(layout.body, i, jt, layout.qf[bi[i, BI_Q_START]])
            nj = 1
        else:
            E, r, nj = _multi_dof_transform(layout.body, layout.subspace, i, jt, layout.qf,
                                            bi[i, BI_Q_START], bi[i, BI_V_START])
        _put9(layout.work, i, W_E, E)
        _put3(layout.work, i, W_R, r)
        return E, r, nj

    @_kernel(inline='always')
    def _add_one_dof_motion(body, i, w, v, aw, al, qd, qdd):
        """``v + vJ`` and ``a + S qdd + v x vJ`` for ``S = [0 0 sa 0 0 sl]``, ``vJ = S qd``."""
        sa = body[i, B_SA]
        sl = body[i, B_SL]
        dw = sa * qd
        dl = sl * qd
        # v x vJ with vJ along z: only the x and y rows
        aw = (aw[0] + w[1] * dw, aw[1] - w[0] * dw, aw[2] + sa * qdd)
        al = (al[0] + w[1] * dl + v[1] * dw, al[1] - w[0] * dl - v[0] * dw, al[2] + sl * qdd)
        return (w[0], w[1], w[2] + dw), (v[0], v[1], v[2] + dl), aw, al

    @_kernel(inline='always')
    def _parent_motion(layout, i, E, r):
        """
        Return body ``i``'s velocity and acceleration from its parent's, before its joint's.

        The parent's transformed into body coordinates; gravity is the base's acceleration
        ``-a_g``.
        """
        wb, g = layout.work, layout.gravity
        p = layout.body_ints[i, BI_PARENT]
        if p < 0:  # the base: v = 0, a = -a_g
            zero = (0.0, 0.0, 0.0)
            pw, pv, paw, pal = zero, zero, zero, (-g[0], -g[1], -g[2])
        else:
            pw, pv = _row3(wb, p, W_W), _row3(wb, p, W_V)
            paw, pal = _row3(wb, p, W_AW), _row3(wb, p, W_AL)
        w, v = _motion_transform(E, r, pw, pv)
        aw, al = _motion_transform(E, r, paw, pal)
        return w, v, aw, al

    @_kernel(inline='always')
    def _add_joint_motion(layout, i, nj, w, v, aw, al):
        """Add body ``i``'s joint's velocity ``S qd`` and acceleration ``S qdd + cJ + v x vJ``."""
        bi, body, vf, af = layout.body_ints, layout.body, layout.vf, layout.af
        vi = bi[i, BI_V_START]
        if bi[i, BI_JTYPE] <= ONE_DOF:
            return _add_one_dof_motion(body, i, w, v, aw, al, vf[vi], af[vi])
        vjw, vjl = _subspace_product(layout.subspace, vi, nj, vf)
        ajw, ajl = _subspace_product(layout.subspace, vi, nj, af)
        if bi[i, BI_JTYPE] == JT_PLANAR:
            # cJ = -(axis theta_dot) x vJ_linear (apparent derivative of S in C)
            ajl = _sub(ajl, _scale(vf[vi + 2], _cross(_row3(body, i, B_AXIS), vjl)))
        w, v = _add(w, vjw), _add(v, vjl)
        cw, cl = _motion_cross(w, v, vjw, vjl)
        return w, v, _add(_add(aw, ajw), cw), _add(_add(al, ajl), cl)

    @_kernel(inline='always')
    def _store_motion(layout, i, w, v, aw, al):
        """Keep body ``i``'s velocity and acceleration in its work row."""
        wb = layout.work
        _put3(wb, i, W_W, w)
        _put3(wb, i, W_V, v)
        _put3(wb, i, W_AW, aw)
        _put3(wb, i, W_AL, al)

    # The RNEA's forward pass for body ``i`` (Table 5.1) is these three calls. Each is inlined
    # on its own: numba older than 0.57 inlines a function by copying its IR one statement at
    # a time, each copy with the function's whole scope, so its cost grows with the square of
    # the function's size (inlined calls included). The forward pass inlined as one function
    # (some 1,250 statements) took more than half of rnea1's compilation on numba 0.55; in
    # small pieces, a small part. Compiled, both forms are the same code.

    @_kernel()
    def _rnea_state(layout, q, qd, qdd, fext, tau):
        """RNEA for one state; body forces stay in the work rows (columns ``W_N``, ``W_F``)."""
        inertia, wb = layout.inertia, layout.work
        _positions(layout, q)
        _rates(layout, qd, qdd)
        for i in range(layout.header[H_NB]):
            E, r, nj = _joint_transform(layout, i)
            w, v, aw, al = _parent_motion(layout, i, E, r)
            w, v, aw, al = _add_joint_motion(layout, i, nj, w, v, aw, al)
            _store_motion(layout, i, w, v, aw, al)
            # f = I a + v x* I v - f_ext (Eq. 5.9)
            n, f = _inertia_product(inertia, i, aw, al)
            mw, mv = _inertia_product(inertia, i, w, v)
            bn, bf = _force_cross(w, v, mw, mv)
            _put3(wb, i, W_N, _sub(_add(n, bn), _row3(fext, i, 0)))
            _put3(wb, i, W_F, _sub(_add(f, bf), _row3(fext, i, 3)))
        for i in range(layout.header[H_NB] - 1, -1, -1):  # backward pass
            n, f = _row3(wb, i, W_N), _row3(wb, i, W_F)
            _joint_torque(layout, i, n, f)
            _carry_force(layout, i, n, f)
        _fold_torques(layout, tau)

    @_kernel()
    def _static_state(layout, q, fext, tau):
        """
        Run the forward pass of a static state.

        RNEA with zero velocity and acceleration: only linear accelerations (gravity)
        propagate, ``n = h x a``, ``f = m a`` (``a`` linear).
        """
        bi, inertia, wb = layout.body_ints, layout.inertia, layout.work
        g = layout.gravity
        _positions(layout, q)
        for i in range(layout.header[H_NB]):
            p = bi[i, BI_PARENT]
            pal = (-g[0], -g[1], -g[2]) if p < 0 else _row3(wb, p, W_AL)
            E, r, nj = _joint_transform(layout, i)
            al = _rotate(E, pal)
            _put3(wb, i, W_AL, al)
            _put3(wb, i, W_N, _sub(_cross(_row3(inertia, i, IN_H), al), _row3(fext, i, 0)))
            _put3(wb, i, W_F, _sub(_scale(inertia[i, IN_MASS], al), _row3(fext, i, 3)))
        for i in range(layout.header[H_NB] - 1, -1, -1):  # backward pass
            n, f = _row3(wb, i, W_N), _row3(wb, i, W_F)
            _joint_torque(layout, i, n, f)
            _carry_force(layout, i, n, f)
        _fold_torques(layout, tau)

    # The backward pass (Table 5.1), in the state kernels' own loop over the bodies: three
    # small inline functions rather than one large one (see _rnea_state on numba's cost of
    # inlining).

    @_kernel(inline='always')
    def _joint_torque(layout, i, n, f):
        """``tau_i = S_i^T f_i`` into ``tauf``, for the force ``(n, f)`` of body ``i``."""
        bi, tauf = layout.body_ints, layout.tauf
        vi = bi[i, BI_V_START]
        jt = bi[i, BI_JTYPE]
        if jt <= ONE_DOF:
            tauf[vi] = layout.body[i, B_SA] * n[2] + layout.body[i, B_SL] * f[2]
        else:
            S = layout.subspace
            for k in range(vi, vi + (6 if jt == JT_FLOATING else 3)):
                tauf[k] = _dot(_row3(S, k, 0), n) + _dot(_row3(S, k, 3), f)

    @_kernel(inline='always')
    def _carry_force(layout, i, n, f):
        """``f_parent += X^T f_i`` for the force ``(n, f)`` of body ``i``."""
        wb = layout.work
        p = layout.body_ints[i, BI_PARENT]
        if p >= 0:
            pn, pf = _transpose_force_transform(_row9(wb, i, W_E), _row3(wb, i, W_R), n, f)
            _put3(wb, p, W_N, _add(_row3(wb, p, W_N), pn))
            _put3(wb, p, W_F, _add(_row3(wb, p, W_F), pf))

    @_kernel(inline='always')
    def _fold_torques(layout, tau):
        """``tau`` from ``tauf``: mimic joints folded into their masters."""
        tauf = layout.tauf
        for k in range(tau.shape[0]):
            tau[k] = 0.0
        src, mult = layout.v_src, layout.v_mult
        for k in range(tauf.shape[0]):
            tau[src[k]] += mult[k] * tauf[k]

    @_kernel()
    def rnea1(blob, q, qd, qdd, fext, tau):
        """One state: :data:`OK`, or :data:`BAD_SIZES` (nothing computed)."""
        layout = _decode(blob)
        hdr = layout.header
        nv = hdr[H_NV]
        if q.shape[0] != hdr[H_NQ] or qd.shape[0] != nv or qdd.shape[0] != nv or \
                tau.shape[0] != nv or fext.shape[0] != hdr[H_NB]:
            return BAD_SIZES
        _rnea_state(layout, q, qd, qdd, fext, tau)
        return OK

    @_kernel()
    def gravity1(blob, q, fext, tau):
        """One static state (zero velocity and acceleration): :data:`OK` or :data:`BAD_SIZES`."""
        layout = _decode(blob)
        hdr = layout.header
        if q.shape[0] != hdr[H_NQ] or tau.shape[0] != hdr[H_NV] or fext.shape[0] != hdr[H_NB]:
            return BAD_SIZES
        _static_state(layout, q, fext, tau)
        return OK

    @_kernel()
    def body_force1(blob, q, qd, qdd, fext, static, body, out):
        """
        Compute the force that carries ``body`` and everything beyond it.

        One state (static: ``qd``, ``qdd`` unused); ``out`` gets the force ``[n, f]`` of
        ``body`` after the backward pass, everything beyond it included. Returns :data:`OK`
        or :data:`BAD_SIZES`.
        """
        layout = _decode(blob)
        hdr = layout.header
        nv = hdr[H_NV]
        if q.shape[0] != hdr[H_NQ] or fext.shape[0] != hdr[H_NB] or out.shape[0] != 6 or \
                not 0 <= body < hdr[H_NB]:
            return BAD_SIZES
        if static:
            _static_state(layout, q, fext, layout.spare)
        else:
            if qd.shape[0] != nv or qdd.shape[0] != nv:
                return BAD_SIZES
            _rnea_state(layout, q, qd, qdd, fext, layout.spare)
        for k in range(6):
            out[k] = layout.work[body, W_N + k]
        return OK

    @_kernel(inline='always')
    def _batch_state(layout, q, qd, qdd, fext, tau, mode, s):
        """State ``s`` of a batch; ``fext`` is ``(B, nb, 6)`` or ``(1, nb, 6)`` (shared)."""
        f = fext[0 if fext.shape[0] == 1 else s]
        if mode == MODE_STATIC:
            _static_state(layout, q[s], f, tau[s])
        else:
            _rnea_state(layout, q[s], qd[s], qdd[s], f, tau[s])

    @_kernel()
    def _batch(blob, q, qd, qdd, fext, tau, mode):
        """Run the single-state kernels over ``q (B, nq)``."""
        layout = _decode(blob)
        for s in range(q.shape[0]):
            _batch_state(layout, q, qd, qdd, fext, tau, mode, s)

    @_kernel(parallel=True)
    def _batch_parallel(blobs, q, qd, qdd, fext, tau, mode):
        """
        Run :func:`_batch` in ranges on numba's threads.

        Each range works on its own copy of the blob (and so of the workspace): one row of
        ``blobs``.
        """
        count = q.shape[0]
        chunks = blobs.shape[0]
        size = (count + chunks - 1) // chunks
        for c in prange(chunks):
            layout = _decode(blobs[c])
            for s in range(c * size, min(count, (c + 1) * size)):
                _batch_state(layout, q, qd, qdd, fext, tau, mode, s)

    # The equations of motion, one state at a time, in world (root link) coordinates: there a
    # joint's column S_j is the same for every body beyond it, composite inertias are sums,
    # and each entry of M, C and Y is a dot product of a column with a composite quantity
    # (the world-frame forms of Featherstone's CRBA, Table 6.2, and of the factorisation of
    # Echeandia & Wensing, J. Comput. Nonlinear Dyn. 2021, as Pinocchio computes them). Every
    # state kernel reads the coordinates from qf, vf, af and adds its result into ``out`` with
    # the mimic map (``out`` in independent coordinates: M = G^T Mf G, C = G^T Cf G,
    # J = Jf G, Y = G^T Yf).

    @_kernel(inline='always')
    def _dofs(jt):
        """Return the number of velocities of a joint type."""
        if jt <= ONE_DOF:
            return 1
        return 6 if jt == JT_FLOATING else 3

    @_kernel(inline='always')
    def _matmul_t(A, B):
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

    @_kernel(inline='always')
    def _dot6(aw, av, bw, bv):
        """Return the product of a motion and a force (two 6-vectors): ``a . b``."""
        return (aw[0] * bw[0] + aw[1] * bw[1] + aw[2] * bw[2] + av[0] * bv[0] + av[1] * bv[1]
                + av[2] * bv[2])

    @_kernel(inline='always')
    def _inertia_product_at(a, i, col, w, v):
        """:func:`_inertia_product` of the inertia in the columns ``col...`` of ``a``."""
        m = a[i, col + IN_MASS]
        h = _row3(a, i, col + IN_H)
        o = col + IN_ROT
        xx, xy, xz, yy, yz, zz = a[i, o], a[i, o + 1], a[i, o + 2], a[i, o + 3], a[i, o + 4], \
            a[i, o + 5]
        ibar_w = (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2],
                  xz * w[0] + yz * w[1] + zz * w[2])
        return _add(ibar_w, _cross(h, v)), _sub(_scale(m, v), _cross(h, w))

    @_kernel(inline='always')
    def _packed_column(layout, i, jt, k):
        """Column ``k`` of body ``i``'s motion subspace, packed body coordinates."""
        if jt <= ONE_DOF:
            return (0.0, 0.0, layout.body[i, B_SA]), (0.0, 0.0, layout.body[i, B_SL])
        return _row3(layout.subspace, k, 0), _row3(layout.subspace, k, 3)

    @_kernel(inline='always')
    def _world_pose(layout, eom, i, E, r, jt, nj):
        """
        Store body ``i``'s pose and its joint's columns in world coordinates; return the pose.

        After the parent's: ``0_X_i^-1`` from ``E0 = E E0_parent``, ``r0 = r0_parent +
        E0_parent^T r``; a column ``(w, v)`` of the body is ``(E0^T w, E0^T v + r0 x E0^T w)``.
        """
        pose, col = eom.pose, eom.column
        p = layout.body_ints[i, BI_PARENT]
        if p < 0:
            E0, r0 = E, r
        else:
            Ep = _row9(pose, p, P_E0)
            E0 = _matmul(E, Ep)
            r0 = _add(_row3(pose, p, P_R0), _rotate_t(Ep, r))
        _put9(pose, i, P_E0, E0)
        _put3(pose, i, P_R0, r0)
        vs = layout.body_ints[i, BI_V_START]
        if jt <= ONE_DOF:  # S = [0 0 sa 0 0 sl]: the body's z axis in world coordinates
            z = (E0[6], E0[7], E0[8])
            ww = _scale(layout.body[i, B_SA], z)
            _put3(col, vs, C_S, ww)
            _put3(col, vs, C_S + 3, _add(_scale(layout.body[i, B_SL], z), _cross(r0, ww)))
        else:
            for k in range(vs, vs + nj):
                ww = _rotate_t(E0, _row3(layout.subspace, k, 0))
                _put3(col, k, C_S, ww)
                _put3(col, k, C_S + 3, _add(_rotate_t(E0, _row3(layout.subspace, k, 3)),
                                            _cross(r0, ww)))
        return E0, r0

    @_kernel(inline='always')
    def _world_inertia(layout, eom, i, E0, r0):
        """
        Store body ``i``'s inertia in world coordinates as its composite inertia's start.

        Rotated, ``h' = E0^T h`` and ``Ibar' = E0^T Ibar E0``; moved from the body origin
        ``p = r0`` to the world origin, ``h = h' + m p`` and ``Ibar = Ibar' + (2 h'.p + m p.p)
        1 - (h' p^T + p h'^T + m p p^T)`` (the second moment of mass grows by the bracket).
        """
        inertia, pose = layout.inertia, eom.pose
        m = inertia[i, IN_MASS]
        h = _rotate_t(E0, _row3(inertia, i, IN_H))
        o = IN_ROT
        xx, xy, xz, yy, yz, zz = inertia[i, o], inertia[i, o + 1], inertia[i, o + 2], \
            inertia[i, o + 3], inertia[i, o + 4], inertia[i, o + 5]
        R = _matmul_t(E0, _matmul((xx, xy, xz, xy, yy, yz, xz, yz, zz), E0))
        p = r0
        t = 2.0 * _dot(h, p) + m * _dot(p, p)
        mp = _scale(m, p)
        pose[i, P_IC + IN_MASS] = m
        _put3(pose, i, P_IC + IN_H, _add(h, mp))
        o = P_IC + IN_ROT
        pose[i, o] = R[0] + t - 2.0 * h[0] * p[0] - mp[0] * p[0]
        pose[i, o + 1] = R[1] - h[0] * p[1] - p[0] * h[1] - mp[0] * p[1]
        pose[i, o + 2] = R[2] - h[0] * p[2] - p[0] * h[2] - mp[0] * p[2]
        pose[i, o + 3] = R[4] + t - 2.0 * h[1] * p[1] - mp[1] * p[1]
        pose[i, o + 4] = R[5] - h[1] * p[2] - p[1] * h[2] - mp[1] * p[2]
        pose[i, o + 5] = R[8] + t - 2.0 * h[2] * p[2] - mp[2] * p[2]

    @_kernel(inline='always')
    def _world_b(pose, i, w, v):
        """
        Store ``B`` of body ``i`` in world coordinates (inertia, velocity ``w``, ``v``).

        Echeandia & Wensing's ``B = (v x* I - I v x + crf_bar(I v)) / 2`` in world coordinates
        (Pinocchio's form; in body coordinates ``+ I v x``), with ``crf_bar(g) u = u x* g``:
        ``B v = v x* I v`` and ``B + B^T = v x* I - I v x``, the rate of change of the world
        inertia. With ``W = [w]x``, ``I v = (n, f)`` and ``[a]x [b]x = b a^T - (a.b) 1`` its
        blocks are ``B11 = Sym - [n / 2]x``, ``Sym = (W Ibar + (W Ibar)^T - h v^T - v h^T) / 2
        + (v.h) 1``, ``B12 = [beta]x``, ``beta = (w x h + m v - f) / 2``, ``B21 = [gamma]x``,
        ``gamma = -(w x h + m v + f) / 2``, ``B22 = 0``: fifteen numbers, stored as ``Sym``,
        ``n / 2``, ``beta``, ``gamma`` (sums of them are the composite's).
        """
        m = pose[i, P_IC + IN_MASS]
        h = _row3(pose, i, P_IC + IN_H)
        o = P_IC + IN_ROT
        xx, xy, xz, yy, yz, zz = pose[i, o], pose[i, o + 1], pose[i, o + 2], pose[i, o + 3], \
            pose[i, o + 4], pose[i, o + 5]
        n, f = _inertia_product_at(pose, i, P_IC, w, v)
        # the columns of W Ibar: w x (each column of Ibar)
        c0, c1, c2 = _cross(w, (xx, xy, xz)), _cross(w, (xy, yy, yz)), _cross(w, (xz, yz, zz))
        vh = _dot(v, h)
        b = P_BC
        pose[i, b] = c0[0] - h[0] * v[0] + vh
        pose[i, b + 1] = 0.5 * (c1[0] + c0[1]) - 0.5 * (h[0] * v[1] + v[0] * h[1])
        pose[i, b + 2] = 0.5 * (c2[0] + c0[2]) - 0.5 * (h[0] * v[2] + v[0] * h[2])
        pose[i, b + 3] = c1[1] - h[1] * v[1] + vh
        pose[i, b + 4] = 0.5 * (c2[1] + c1[2]) - 0.5 * (h[1] * v[2] + v[1] * h[2])
        pose[i, b + 5] = c2[2] - h[2] * v[2] + vh
        _put3(pose, i, b + 6, _scale(0.5, n))
        wh_mv = _add(_cross(w, h), _scale(m, v))
        _put3(pose, i, b + 9, _scale(0.5, _sub(wh_mv, f)))
        _put3(pose, i, b + 12, _scale(-0.5, _add(wh_mv, f)))

    @_kernel(inline='always')
    def _b_product(pose, i, w, v, transpose):
        """
        Multiply ``[w; v]`` by the (composite) ``B`` of body ``i``, or by its transpose.

        ``B [w; v] = (Sym w - n/2 x w + beta x v, gamma x w)``; ``B^T [w; v] = (Sym w +
        n/2 x w - gamma x v, -beta x w)`` (see :func:`_world_b`).
        """
        b = P_BC
        xx, xy, xz, yy, yz, zz = pose[i, b], pose[i, b + 1], pose[i, b + 2], pose[i, b + 3], \
            pose[i, b + 4], pose[i, b + 5]
        sym = (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2],
               xz * w[0] + yz * w[1] + zz * w[2])
        half_n = _row3(pose, i, b + 6)
        beta = _row3(pose, i, b + 9)
        gamma = _row3(pose, i, b + 12)
        if transpose:
            return _sub(_add(sym, _cross(half_n, w)), _cross(gamma, v)), _cross(w, beta)
        return _add(_sub(sym, _cross(half_n, w)), _cross(beta, v)), _cross(gamma, w)

    @_kernel(inline='always')
    def _add_pair(out, src, mult, a, c, value):
        """Add ``value`` at full ``(a, c)`` and, for ``a != c``, at ``(c, a)``, folded."""
        x = mult[a] * mult[c] * value
        out[src[a], src[c]] += x
        if a != c:
            out[src[c], src[a]] += x

    @_kernel(inline='always')
    def _zero(out):
        for r in range(out.shape[0]):
            for c in range(out.shape[1]):
                out[r, c] = 0.0

    @_kernel(inline='always')
    def _accumulate(pose, bi, nb, col, size):
        """Add the columns ``col:col + size`` of every body's pose row into its parent's."""
        for i in range(nb - 1, -1, -1):
            p = bi[i, BI_PARENT]
            if p >= 0:
                for k in range(col, col + size):
                    pose[p, k] += pose[i, k]

    @_kernel()
    def _mass_state(layout, eom, out):
        """
        Compute ``M`` of the positions in ``qf`` into ``out`` ``(nv, nv)``.

        CRBA in world coordinates: ``Ic_i`` is the sum of the world inertias beyond body
        ``i``, and for a column ``a`` of body ``i`` and ``c`` on its way to the root
        (``column_parent``), ``Mf[a, c] = (Ic_i s_a) . s_c``.
        """
        bi, pose, col = layout.body_ints, eom.pose, eom.column
        nb = layout.header[H_NB]
        for i in range(nb):
            E, r, nj = _joint_transform(layout, i)
            E0, r0 = _world_pose(layout, eom, i, E, r, bi[i, BI_JTYPE], nj)
            _world_inertia(layout, eom, i, E0, r0)
        _accumulate(pose, bi, nb, P_IC, INERTIA_FLOATS)
        _zero(out)
        src, mult, parent, owner = (layout.v_src, layout.v_mult, eom.column_parent,
                                    eom.column_body)
        for a in range(col.shape[0]):
            uw, uv = _inertia_product_at(pose, owner[a], P_IC, _row3(col, a, C_S),
                                         _row3(col, a, C_S + 3))
            c = a
            while c >= 0:
                _add_pair(out, src, mult, a, c, _dot6(uw, uv, _row3(col, c, C_S),
                                                      _row3(col, c, C_S + 3)))
                c = parent[c]

    @_kernel()
    def _coriolis_state(layout, eom, out):
        """
        Compute ``C`` of the state in ``qf``, ``vf`` into ``out`` ``(nv, nv)``.

        In world coordinates, with body velocities ``v_i``, columns ``s`` and their rates
        ``sd = v_i x s`` (plus the planar joint's own), the composites ``Ic`` and ``Bc`` of the
        bodies beyond body ``i`` (see :func:`_world_b`): for a column ``a`` of body ``i`` and
        ``c`` on its way to the root (``column_parent``), ``Cf[a, c] = (Ic s_a) . sd_c +
        (Bc^T s_a) . s_c`` and ``Cf[c, a] = s_c . (Ic sd_a + Bc s_a)``.
        """
        bi, body, pose, col, vf = (layout.body_ints, layout.body, eom.pose, eom.column,
                                   layout.vf)
        nb = layout.header[H_NB]
        zero = (0.0, 0.0, 0.0)
        for i in range(nb):
            jt = bi[i, BI_JTYPE]
            E, r, nj = _joint_transform(layout, i)
            E0, r0 = _world_pose(layout, eom, i, E, r, jt, nj)
            p = bi[i, BI_PARENT]
            w, v = (zero, zero) if p < 0 else (_row3(pose, p, P_W), _row3(pose, p, P_V))
            vs = bi[i, BI_V_START]
            for k in range(vs, vs + nj):
                w = _add(w, _scale(vf[k], _row3(col, k, C_S)))
                v = _add(v, _scale(vf[k], _row3(col, k, C_S + 3)))
            _put3(pose, i, P_W, w)
            _put3(pose, i, P_V, v)
            for k in range(vs, vs + nj):
                dw, dv = _motion_cross(w, v, _row3(col, k, C_S), _row3(col, k, C_S + 3))
                if jt == JT_PLANAR and k < vs + 2:
                    # the planar joint's S turns with theta: d/dt S_lin = -(axis theta_dot) x S_lin
                    turn = _scale(-vf[vs + 2], _cross(_row3(body, i, B_AXIS),
                                                      _row3(layout.subspace, k, 3)))
                    dv = _add(dv, _rotate_t(E0, turn))
                _put3(col, k, C_SD, dw)
                _put3(col, k, C_SD + 3, dv)
            _world_inertia(layout, eom, i, E0, r0)
            _world_b(pose, i, w, v)
        _accumulate(pose, bi, nb, P_IC, INERTIA_FLOATS + B_FLOATS)
        _zero(out)
        src, mult, parent, owner = (layout.v_src, layout.v_mult, eom.column_parent,
                                    eom.column_body)
        for a in range(col.shape[0]):
            i = owner[a]
            sw, sv = _row3(col, a, C_S), _row3(col, a, C_S + 3)
            uw, uv = _inertia_product_at(pose, i, P_IC, sw, sv)
            bw, bv = _b_product(pose, i, sw, sv, True)
            zw, zv = _b_product(pose, i, sw, sv, False)
            dw, dv = _inertia_product_at(pose, i, P_IC, _row3(col, a, C_SD),
                                         _row3(col, a, C_SD + 3))
            zw, zv = _add(zw, dw), _add(zv, dv)
            out[src[a], src[a]] += mult[a] * mult[a] * (
                _dot6(uw, uv, _row3(col, a, C_SD), _row3(col, a, C_SD + 3))
                + _dot6(bw, bv, sw, sv))
            c = parent[a]
            while c >= 0:
                cw, cv = _row3(col, c, C_S), _row3(col, c, C_S + 3)
                m = mult[a] * mult[c]
                out[src[a], src[c]] += m * (
                    _dot6(uw, uv, _row3(col, c, C_SD), _row3(col, c, C_SD + 3))
                    + _dot6(bw, bv, cw, cv))
                out[src[c], src[a]] += m * _dot6(cw, cv, zw, zv)
                c = parent[c]

    @_kernel(inline='always')
    def _unit_cross(k, u):
        """``e_k x u`` for the unit vector ``e_k`` along axis ``k``."""
        if k == 0:
            return 0.0, -u[2], u[1]
        if k == 1:
            return u[2], 0.0, -u[0]
        return -u[1], u[0], 0.0

    @_kernel(inline='always')
    def _rotational_column(p, w):
        """``Ibar_p w`` for the rotational inertia whose only parameter ``p`` (4-9) is 1."""
        if p == 4:  # ixx
            return w[0], 0.0, 0.0
        if p == 5:  # ixy
            return w[1], w[0], 0.0
        if p == 6:  # ixz
            return w[2], 0.0, w[0]
        if p == 7:  # iyy
            return 0.0, w[1], 0.0
        if p == 8:  # iyz
            return 0.0, w[2], w[1]
        return 0.0, 0.0, w[2]  # izz

    @_kernel(inline='always')
    def _parameter_forces(forces, w, v, aw, al):
        """
        Write the body force ``I_p a + v x* I_p v`` of each inertial parameter into ``forces``.

        ``I_p``: the inertia whose only parameter ``p`` is 1 (Eq. 2.63: ``I u = (Ibar w + h x
        u_lin, m u_lin - h x w)``), velocity ``(w, v)`` and acceleration ``(aw, al)``; row ``p``
        gets ``(n, f)``. The mass: ``(0, al + w x v)``; a first moment along ``e_k``: ``(e_k x
        al, aw x e_k) + v x* (e_k x v, w x e_k)``; a rotational one: ``(Ibar_p aw + w x Ibar_p
        w, 0)``.
        """
        zero = (0.0, 0.0, 0.0)
        _put3(forces, 0, 0, zero)
        _put3(forces, 0, 3, _add(al, _cross(w, v)))
        for k in range(3):
            cn, cf = _force_cross(w, v, _unit_cross(k, v), _scale(-1.0, _unit_cross(k, w)))
            _put3(forces, 1 + k, 0, _add(_unit_cross(k, al), cn))
            _put3(forces, 1 + k, 3, _sub(cf, _unit_cross(k, aw)))
        for p in range(4, INERTIA_FLOATS):
            _put3(forces, p, 0, _add(_rotational_column(p, aw),
                                     _cross(w, _rotational_column(p, w))))
            _put3(forces, p, 3, zero)

    @_kernel()
    def _regressor_state(layout, eom, out):
        """
        Compute ``Y`` of the state in ``qf``, ``vf``, ``af`` into ``out`` ``(nv, 10 nb)``.

        Body ``i``'s force ``f_i = I_i a_i + v_i x* I_i v_i`` is linear in its parameters
        (model body coordinates: the packed motion turned by ``Q``); each of the ten columns
        goes to world coordinates, and ``Yf[a, 10 i + p]`` is its product with the world
        column ``s_a`` of every joint from the root to body ``i``.
        """
        bi, body, pose, col = layout.body_ints, layout.body, eom.pose, eom.column
        nb = layout.header[H_NB]
        for i in range(nb):
            E, r, nj = _joint_transform(layout, i)
            w, v, aw, al = _parent_motion(layout, i, E, r)
            w, v, aw, al = _add_joint_motion(layout, i, nj, w, v, aw, al)
            _store_motion(layout, i, w, v, aw, al)
            _world_pose(layout, eom, i, E, r, bi[i, BI_JTYPE], nj)
        _zero(out)
        src, mult, parent, wb, forces = (layout.v_src, layout.v_mult, eom.column_parent,
                                         layout.work, eom.forces)
        for i in range(nb):
            Q = _row9(body, i, B_Q)
            to_model = _matmul(Q, _row9(pose, i, P_E0))  # world -> model body axes
            r0 = _row3(pose, i, P_R0)
            w, v = _rotate(Q, _row3(wb, i, W_W)), _rotate(Q, _row3(wb, i, W_V))
            aw, al = _rotate(Q, _row3(wb, i, W_AW)), _rotate(Q, _row3(wb, i, W_AL))
            _parameter_forces(forces, w, v, aw, al)
            for p in range(INERTIA_FLOATS):  # to world coordinates (no linear force from 4 on)
                fw = _rotate_t(to_model, _row3(forces, p, 3)) if p < 4 else (0.0, 0.0, 0.0)
                _put3(forces, p, 3, fw)
                _put3(forces, p, 0, _add(_rotate_t(to_model, _row3(forces, p, 0)),
                                         _cross(r0, fw)))
            first = INERTIA_FLOATS * i
            a = bi[i, BI_V_START] + _dofs(bi[i, BI_JTYPE]) - 1  # the body's last column
            while a >= 0:
                sw, sv = _row3(col, a, C_S), _row3(col, a, C_S + 3)
                row = src[a]
                m = mult[a]
                for p in range(INERTIA_FLOATS):
                    out[row, first + p] += m * (_dot6(sw, sv, _row3(forces, p, 0),
                                                      _row3(forces, p, 3)))
                a = parent[a]

    @_kernel()
    def _jacobian_state(layout, eom, code, out):
        """
        Compute a Jacobian at the positions in ``qf`` into ``out`` ``(6, nv)``.

        ``code``: twice the link's row in ``links``, plus one for the link's axes. Walks from
        the link's body to the root with ``X = link_X_j``: the column of joint ``j`` is
        ``X S_j``, in link coordinates (kept in the ``column`` rows); then along the same path
        again, each column turned by ``E^T`` of ``link_X_root`` for world axes, and folded
        into ``out``, linear rows first.
        """
        bi, links, col = layout.body_ints, eom.links, eom.column
        link = code // 2
        _zero(out)
        b = np.int64(links[link, L_BODY])
        if b < 0:
            return
        E = _row9(links, link, L_E)
        r = _row3(links, link, L_R)
        body = layout.body
        j = b
        while j >= 0:
            jt = bi[j, BI_JTYPE]
            vs = bi[j, BI_V_START]
            if jt <= ONE_DOF:
                Ej, rj = _one_dof_transform(body, j, jt, layout.qf[bi[j, BI_Q_START]])
                # X S for S = (0 0 sa, 0 0 sl), written out: (sa E z, E (sl z - r x sa z))
                sa, sl = body[j, B_SA], body[j, B_SL]
                _put3(col, vs, C_S, (sa * E[2], sa * E[5], sa * E[8]))
                _put3(col, vs, C_S + 3, _rotate(E, (-sa * r[1], sa * r[0], sl)))
            else:
                Ej, rj, nj = _multi_dof_transform(body, layout.subspace, j, jt, layout.qf,
                                                  bi[j, BI_Q_START], vs)
                for k in range(vs, vs + nj):
                    sw, sv = _packed_column(layout, j, jt, k)
                    w, v = _motion_transform(E, r, sw, sv)
                    _put3(col, k, C_S, w)
                    _put3(col, k, C_S + 3, v)
            # link_X_parent = link_X_j j_X_parent: rot(E Ej) xlt(Ej^T r + rj)
            r = _add(_rotate_t(Ej, r), rj)
            E = _matmul(E, Ej)
            j = bi[j, BI_PARENT]
        local = code % 2 == 1
        src, mult, parent = layout.v_src, layout.v_mult, eom.column_parent
        k = bi[b, BI_V_START] + _dofs(bi[b, BI_JTYPE]) - 1  # the body's last column
        while k >= 0:
            w, v = _row3(col, k, C_S), _row3(col, k, C_S + 3)
            if not local:  # E: root -> link axes
                w, v = _rotate_t(E, w), _rotate_t(E, v)
            m = mult[k]
            c = src[k]
            for row in range(3):
                out[row, c] += m * v[row]
                out[3 + row, c] += m * w[row]
            k = parent[k]

    # The single-state entry points inline these two: a call passes both layouts' array
    # views, about a tenth of the 7-DoF arm's compiled Jacobian call. The batch kernel
    # calls them (numba's analysis of the parallel loop refuses them inlined there).
    _mass_state_inline = _kernel(inline='always')(_mass_state.py_func)
    _jacobian_state_inline = _kernel(inline='always')(_jacobian_state.py_func)

    @_kernel()
    def mass1(blob, q, out):
        """``M`` of one state into ``out``: :data:`OK`, or :data:`BAD_SIZES` (nothing done)."""
        layout = _decode(blob)
        eom = _decode_eom(blob)
        hdr = layout.header
        nv = hdr[H_NV]
        if q.shape[0] != hdr[H_NQ] or out.shape[0] != nv or out.shape[1] != nv:
            return BAD_SIZES
        _positions(layout, q)
        _mass_state_inline(layout, eom, out)
        return OK

    @_kernel()
    def coriolis1(blob, q, qd, out):
        """``C`` of one state into ``out``: :data:`OK` or :data:`BAD_SIZES`."""
        layout = _decode(blob)
        eom = _decode_eom(blob)
        hdr = layout.header
        nv = hdr[H_NV]
        if q.shape[0] != hdr[H_NQ] or qd.shape[0] != nv or out.shape[0] != nv or \
                out.shape[1] != nv:
            return BAD_SIZES
        _positions(layout, q)
        _rates(layout, qd, qd)
        _coriolis_state(layout, eom, out)
        return OK

    @_kernel()
    def jacobian1(blob, q, code, out):
        """
        Compute the Jacobian of :data:`PackedModel.jacobian_code` ``code``.

        Returns :data:`OK` or :data:`BAD_SIZES`.
        """
        layout = _decode(blob)
        eom = _decode_eom(blob)
        hdr = layout.header
        if q.shape[0] != hdr[H_NQ] or out.shape[0] != 6 or out.shape[1] != hdr[H_NV] or \
                not 0 <= code < 2 * eom.links.shape[0]:
            return BAD_SIZES
        _positions(layout, q)
        _jacobian_state_inline(layout, eom, code, out)
        return OK

    @_kernel()
    def regressor1(blob, q, qd, qdd, out):
        """``Y`` of one state into ``out``: :data:`OK` or :data:`BAD_SIZES`."""
        layout = _decode(blob)
        eom = _decode_eom(blob)
        hdr = layout.header
        nv = hdr[H_NV]
        if q.shape[0] != hdr[H_NQ] or qd.shape[0] != nv or qdd.shape[0] != nv or \
                out.shape[0] != nv or out.shape[1] != INERTIA_FLOATS * hdr[H_NB]:
            return BAD_SIZES
        _positions(layout, q)
        _rates(layout, qd, qdd)
        _regressor_state(layout, eom, out)
        return OK

    @_kernel(inline='always')
    def _eom_batch_state(layout, eom, what, q, qd, qdd, code, out, s):
        """State ``s`` of an equations-of-motion batch (``what``: an ``EOM_`` code)."""
        _positions(layout, q[s])
        if what == EOM_MASS:
            _mass_state(layout, eom, out[s])
        elif what == EOM_CORIOLIS:
            _rates(layout, qd[s], qd[s])
            _coriolis_state(layout, eom, out[s])
        elif what == EOM_JACOBIAN:
            _jacobian_state(layout, eom, code, out[s])
        else:
            _rates(layout, qd[s], qdd[s])
            _regressor_state(layout, eom, out[s])

    @_kernel(parallel=True)
    def _eom_batch_parallel(blobs, what, q, qd, qdd, code, out):
        """
        Run an equations-of-motion state kernel over ``q (B, nq)`` into ``out (B, ., .)``.

        In as many ranges as ``blobs`` has rows (copies of the blob: a workspace each), on
        numba's threads; with one row, on the calling thread's share of them only.
        """
        count = q.shape[0]
        chunks = blobs.shape[0]
        size = (count + chunks - 1) // chunks
        for c in prange(chunks):
            layout = _decode(blobs[c])
            eom = _decode_eom(blobs[c])
            for s in range(c * size, min(count, (c + 1) * size)):
                _eom_batch_state(layout, eom, what, q, qd, qdd, code, out, s)

#: Batches at least this large are spread over numba's threads (all cores by default; set
#: NUMBA_NUM_THREADS to limit them).
PARALLEL_BATCH = 256

#: The single-state entry points (``rnea1``, ``gravity1``, ``body_force1``, ``mass1``,
#: ``coriolis1``, ``jacobian1``, ``regressor1``) as the callers reach them after
#: :func:`warm_up`: the compiled code itself where numba exposes it, else the numba
#: dispatchers. Only inputs that :func:`single_state_forces` accepts may reach them.
ENTRY = {}


def rnea_batch(packed, q, qd, qdd, fext, tau, mode=MODE_FULL):
    """
    Run the compiled RNEA on a batch.

    ``q``, ``qd``, ``qdd``: contiguous, writable ``(B, n)`` float64 arrays; ``fext``
    ``(B or 1, nb, 6)`` in packed body coordinates; ``tau`` ``(B, nv)`` receives the result.
    The batch works in its own copies of the workspace, so it never disturbs single calls.
    """
    threads = numba.get_num_threads()
    if threads > 1 and q.shape[0] >= PARALLEL_BATCH:
        _batch_parallel(np.tile(packed.blob, (threads, 1)), q, qd, qdd, fext, tau, mode)
    else:
        _batch(packed.blob.copy(), q, qd, qdd, fext, tau, mode)


def eom_batch(packed, what, q, qd, qdd, code, out):
    """
    Run an equations-of-motion kernel on a batch (``what``: an ``EOM_`` code).

    ``q``, ``qd``, ``qdd``: contiguous, writable ``(B, n)`` float64 arrays (``qd``, ``qdd``
    any such array where unused); ``code``: the link and frame of :data:`EOM_JACOBIAN`
    (:attr:`PackedModel.jacobian_code`); ``out`` ``(B, rows, columns)`` contiguous receives the
    results. Like :func:`rnea_batch`, on copies of the workspace.
    """
    if 'mass1' not in ENTRY:
        warm_up_eom(packed)
    threads = numba.get_num_threads()
    # one kernel for every size (each kernel compiled costs seconds): a small batch is one
    # range, which runs on one thread
    chunks = threads if q.shape[0] >= PARALLEL_BATCH else 1
    _eom_batch_parallel(np.tile(packed.blob, (chunks, 1)), what, q, qd, qdd, code, out)


#: The steps of :func:`warm_up`, in order, as its ``progress`` callback names them.
WARM_UP_STEPS = ('rnea1', 'gravity1', 'body_force1', 'batch', 'parallel batch')


def warm_up(packed, progress=None):
    """
    Compile the RNEA's kernels, run each once on ``packed`` and give it its entry points.

    Compiles (or loads from numba's on-disk cache) the single-state kernels, fills
    :data:`ENTRY`, then the batch kernels, serial and parallel, so that a model that puts
    ``packed`` in use afterwards never waits on a compilation, not even at its first batch
    (in the node, the first planned trajectory).

    The single-state entry points are compiled for float64 vectors of any strides (read, never
    written) and then frozen: in the dispatcher, anything else (a list, an integer array)
    raises ``TypeError`` at once instead of compiling a new variant in the middle of a control
    loop. The batch kernels are run here on the one array type :func:`rnea_batch`'s callers
    pass (contiguous, writable), so the batch that follows finds them ready.

    ``progress``, when given, is called as ``progress(step, done, total)`` before each of the
    :data:`WARM_UP_STEPS` (a program shows it: a first compilation takes seconds per step).

    Raises
    ------
    RuntimeError
        a kernel refused the neutral state of ``packed``.

    """
    step = _reporter(progress, WARM_UP_STEPS)
    vec, any_vec = _vector_types()
    forces = types.float64[:, ::1]
    signatures = {
        'rnea1': (rnea1, (vec, any_vec, any_vec, any_vec, forces, vec)),
        'gravity1': (gravity1, (vec, any_vec, forces, vec)),
        'body_force1': (body_force1, (vec, any_vec, any_vec, any_vec, forces, types.boolean,
                                      types.int64, vec)),
    }
    _compile_entries(signatures, step)
    _freeze_compiled((_rnea_state, _static_state))
    packed.bind_entry_points()
    q = _neutral(packed)
    zero = np.zeros(packed.nv)
    tau = np.zeros(packed.nv)
    fext = np.zeros((packed.nb, 6))
    if packed.rnea1(packed.blob, q, zero, zero, fext, tau) != OK or \
            packed.gravity1(packed.blob, q, fext, tau) != OK:
        raise RuntimeError('the compiled kernels refused a neutral state')
    # The batch kernels, on two states of the same arrays _compiled_batch passes.
    q = np.tile(q, (2, 1))
    zero = np.zeros((2, packed.nv))
    tau = np.zeros((2, packed.nv))
    fext = np.zeros((1, packed.nb, 6))
    step('batch')
    for mode in (MODE_FULL, MODE_STATIC):
        _batch(packed.blob.copy(), q, zero, zero, fext, tau, mode)
    step('parallel batch')
    for mode in (MODE_FULL, MODE_STATIC):
        _batch_parallel(np.tile(packed.blob, (2, 1)), q, zero, zero, fext, tau, mode)
    if not np.all(np.isfinite(tau)):
        raise RuntimeError('the compiled batch kernels gave non-finite torques at a neutral '
                           'state')


#: The steps of :func:`warm_up_eom`, in order, as its ``progress`` callback names them.
EOM_STEPS = ('mass1', 'coriolis1', 'jacobian1', 'regressor1', 'equations of motion batch')
_EOM_LOCK = threading.Lock()
_EOM_DONE = set()  # the batch steps of warm_up_eom done in this process


def warm_up_eom(packed, progress=None, steps=EOM_STEPS):
    """
    Compile the equations of motion's kernels and give ``packed`` their entry points.

    Like :func:`warm_up`, for :data:`EOM_STEPS`: they cost three times the RNEA's kernels to
    compile, so a model compiles them when it first needs them (the first call of
    :func:`~rbd_dynamics.mass_matrix` and the others, through the stubs a packed model starts
    with), not with the RNEA's; ``python -m rbd_dynamics precompile`` puts them in numba's disk
    cache too, from which a process loads them in a fraction of a second. Thread-safe: the
    kernels compile once per process.

    ``steps``, a part of :data:`EOM_STEPS`, compiles only those (precompile shares them out
    among processes that fill the disk cache side by side); ``packed`` then takes the entry
    points compiled so far and stubs for the others.

    Raises
    ------
    RuntimeError
        a kernel refused the neutral state of ``packed``.

    """
    step = _reporter(progress, EOM_STEPS)
    vec, any_vec = _vector_types()
    matrix = types.float64[:, ::1]
    signatures = {
        'mass1': (mass1, (vec, any_vec, matrix)),
        'coriolis1': (coriolis1, (vec, any_vec, any_vec, matrix)),
        'jacobian1': (jacobian1, (vec, any_vec, types.int64, matrix)),
        'regressor1': (regressor1, (vec, any_vec, any_vec, any_vec, matrix)),
    }
    with _EOM_LOCK:
        _compile_entries({name: entry for name, entry in signatures.items() if name in steps},
                         step)
        _freeze_compiled((_mass_state, _coriolis_state, _jacobian_state, _regressor_state))
        packed._bind_eom()  # only these: a process may compile them without the RNEA's
        q = _neutral(packed)
        zero = np.zeros(packed.nv)
        nv = packed.nv
        outs = {EOM_MASS: (nv, nv), EOM_CORIOLIS: (nv, nv), EOM_JACOBIAN: (6, nv),
                EOM_REGRESSOR: (nv, INERTIA_FLOATS * packed.nb)}
        checks = {
            'mass1': lambda: packed.mass1(packed.blob, q, np.empty(outs[EOM_MASS])),
            'coriolis1': lambda: packed.coriolis1(packed.blob, q, zero,
                                                  np.empty(outs[EOM_CORIOLIS])),
            'jacobian1': lambda: packed.jacobian1(packed.blob, q, 0,
                                                  np.empty(outs[EOM_JACOBIAN])),
            'regressor1': lambda: packed.regressor1(packed.blob, q, zero, zero,
                                                    np.empty(outs[EOM_REGRESSOR])),
        }
        for name, check in checks.items():
            if name in ENTRY and check() != OK:
                raise RuntimeError('the compiled equations of motion refused a neutral state')
        batch = EOM_STEPS[-1]
        if batch not in steps:
            return
        step(batch)
        if batch not in _EOM_DONE:  # the batch kernel, on two states of the arrays
            q = np.tile(q, (2, 1))  # eom_batch's callers pass
            zero = np.zeros((2, nv))
            for what, shape in outs.items():
                out = np.empty((2,) + shape)
                _eom_batch_parallel(np.tile(packed.blob, (2, 1)), what, q, zero, zero, 0, out)
                if not np.all(np.isfinite(out)):
                    raise RuntimeError('the compiled equations of motion gave non-finite '
                                       'results at a neutral state')
            _EOM_DONE.add(batch)


def _reporter(progress, steps):
    """Return ``step(name)``, which reports ``progress(name, done, total)`` of ``steps``."""
    def step(name):
        if progress is not None:
            progress(name, steps.index(name), len(steps))
    return step


def _vector_types():
    """Return the numba types of the entry points' vectors: the blob's, and ``q``'s."""
    return (types.float64[::1],
            types.Array(types.float64, 1, 'A', readonly=True))  # q, qd, qdd: only read


def _compile_entries(signatures, step):
    """
    Compile each ``{name: (dispatcher, signature)}`` entry point once per process, frozen.

    Frozen (no other signature compiles) and its compiled function kept in :data:`ENTRY`.
    """
    for name, (dispatcher, signature) in signatures.items():
        step(name)
        if name not in ENTRY:
            dispatcher.compile(signature)
            dispatcher.disable_compile()
            ENTRY[name] = _entry_point(dispatcher)


def _freeze_compiled(kernels):
    """
    Let the state ``kernels`` compile no other version, where this process compiled one.

    Freshly compiled, the single-state kernels exist for vectors of any strides; the batch
    kernels call them with contiguous rows, which that version takes: compiling another one
    for them would only make the batch kernels' compilation longer. (Loaded from the disk
    cache they have no signature in this process, and the batch kernels come from the cache
    too; freezing them then would leave a batch kernel compiled later nothing to call:
    numba's TypingError.)
    """
    for kernel in kernels:
        if kernel.signatures:
            kernel.disable_compile()


class _CompileFirst:
    """
    An equations-of-motion entry point of a packed model before :func:`warm_up_eom`.

    Called like the entry point, it compiles (or loads) the kernels, which replaces it on the
    packed model with the compiled one, and calls that.
    """

    __slots__ = ('packed', 'name')

    def __init__(self, packed, name):
        self.packed = packed
        self.name = name

    def __call__(self, *args):
        warm_up_eom(self.packed)
        return ENTRY[self.name](*args)


def _entry_point(dispatcher):
    """Return the compiled function behind a dispatcher with one signature, or the dispatcher."""
    overloads = list(getattr(dispatcher, 'overloads', {}).values())
    entry = getattr(overloads[0], 'entry_point', None) if len(overloads) == 1 else None
    return entry if callable(entry) else dispatcher


def _neutral(packed):
    """Return a valid configuration: zeros, with unit quaternions for spherical and floating."""
    q = np.zeros(packed.nq)
    for jt, q_start in packed.body_ints[:, [BI_JTYPE, BI_Q_START]]:
        if jt == JT_SPHERICAL or jt == JT_FLOATING:
            start = q_start + (FLOATING_QUATERNION if jt == JT_FLOATING else 0)
            q[packed.q_src[start + QUATERNION_W]] = 1.0
    return q
