"""
The packed model's layout: one float64 array per model, named by constants.

One array ``blob`` holds a model and its workspace (offsets computed by
:class:`~.packed.PackedModel`), so that a kernel call passes a single model argument. It starts
with integers, stored as int64 bit patterns: their count, a header ``[nb, nqf, nvf, nq, nv]``,
per body ``[parent, jtype, q_start, v_start]``, ``q_src`` (nqf), ``v_src`` (nvf), per full
velocity the column before it on the way to the root (``column_parent``, -1 at the root: the
columns of a multi-DoF joint in a row, then the parent body's last) and its body
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
- scratch: ``qf`` (nqf), ``vf``, ``af``, ``tauf`` (nvf each; the Jacobian keeps its joints'
  cosines and sines in ``vf`` and ``af``: a kernel that reads them fills them first, with
  ``rates``);
- zero_v: ``nv`` zeros;
- spare: ``nv`` torques that ``body_force1`` computes and nobody reads;
- pose ``(nb, POSE_FLOATS)``: the equations of motion's workspace per body, in world (root
  link) coordinates: pose, velocity, composite inertia and composite ``B``;
- column ``(nvf, COLUMN_FLOATS)``: the motion subspace columns in world coordinates and their
  rates of change;
- links ``(number of links, LINK_FLOATS)``: each link's body and its frame in the packed body
  coordinates (on the base: in the root link's; for ``jacobian1``, ``pose1`` and
  ``acceleration1``), in the order of ``model.link_names``;
- forces ``(10, 6)``: the regressor's world force of each inertial parameter of one body.

Per-body data sits in 2-D arrays read with constant column indices: numba then has no negative
index to correct on each access, which halves the cost of a body.

:func:`decode` is the one reader of this layout (:func:`decode_eom` of the equations of
motion's part, which the RNEA's kernels do not read): :class:`~.packed.PackedModel` names its
views with it, and the kernels read the model through the :class:`BlobViews` it returns
(compiled inline: :data:`~.jit.layout_of`). Nothing here needs numba.
"""

import collections

import numpy as np

from ..spatial import axis_angle_to_matrix


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
EOM_MASS, EOM_CORIOLIS, EOM_JACOBIAN, EOM_REGRESSOR, EOM_POSE, EOM_ACCELERATION = range(6)
#: The equations of motion's single-state entry points (see warm_up_eom).
EOM_ENTRIES = ('mass1', 'coriolis1', 'jacobian1', 'regressor1', 'pose1', 'acceleration1',
               'task1', 'floating1')
MODE_FULL = 0
MODE_STATIC = 1
#: The arguments of the task-space law's kernel (:mod:`.task`). ``gains``: the law (0
#: impedance, 1 operational space), Λ's damping threshold and damping, K (6), D (6), k_n (0: no
#: null-space term), then the desired position (3), rotation matrix (9, row-major), twist (6) and
#: acceleration (6), both linear first; the first :data:`G_HEAD` are a configuration's.
G_MODE, G_THRESHOLD, G_DAMPING, G_K, G_D, G_KN, G_POSITION, G_ROTATION, G_TWIST, \
    G_ACCELERATION = 0, 1, 2, 3, 9, 15, 16, 19, 28, 34
G_HEAD = G_POSITION
GAINS = 40
#: Rows of the kernel's ``work`` beyond the model's ``nv``: ``A`` (6) and its eigenvectors (6).
TASK_WORK_ROWS = 12
#: Entries of its ``out`` beyond ``nv``: the pose error, the twist error, workspace (12).
TASK_OUT_EXTRA = 24
#: The floating base's kernel (:mod:`.floating`). Its ``base`` array: in, the IMU's link (its
#: row in ``links``), orientation (4, ``[x y z w]``), angular velocity, angular acceleration and
#: proper acceleration (3 each, the link's frame), 1 where odometry gives the base's rotation
#: instead (else 0), odometry's orientation (4), angular velocity and acceleration (3 each, the
#: base's frame), the magnitude of gravity; out, the base's orientation (4), angular velocity,
#: angular acceleration, proper acceleration and its proper acceleration at rest (3 each).
FB_LINK, FB_ORIENTATION, FB_OMEGA, FB_ALPHA, FB_PROPER, FB_ODOMETRY, FB_ODO_ORIENTATION, \
    FB_ODO_OMEGA, FB_ODO_ALPHA, FB_GRAVITY = 0, 1, 5, 8, 11, 14, 15, 19, 22, 25
BASE_ORIENTATION, BASE_OMEGA, BASE_ALPHA, BASE_PROPER, BASE_REST = 26, 30, 33, 36, 39
BASE = 42
#: What the floating base's kernel does (bits of ``what``): the base's motion from the IMU;
#: the state's torques (the motion given, or just computed); the torques at rest; the state has
#: the sensors' wrenches (``w_base`` from an RNEA without them).
FB_MOTION, FB_MOVING, FB_REST, FB_SENSED = 1, 2, 4, 8
#: The relative pivot below which the contacts' ``A Aᵀ`` counts as singular (the caller then
#: takes the NumPy path's least squares).
FB_PIVOT = 1e-10
#: Status of the single-state entry points: done.
OK = 0
#: Status of the single-state entry points: an array does not have the model's size (nothing
#: computed; the general path then reports which).
BAD_SIZES = 1
#: Status of the task-space law's kernel: ``M`` is not positive definite (a joint that moves no
#: mass); the caller takes the NumPy path, which uses a pseudo-inverse there.
NOT_POSITIVE = 2
EYE3 = np.eye(3)
F8 = np.dtype(np.float64)
#: public ``[force, torque]`` <-> Featherstone ``[n, f]`` (its own inverse)
SWAP = np.block([[np.zeros((3, 3)), EYE3], [EYE3, np.zeros((3, 3))]])


#: The named views of a blob (see :func:`decode`).
BlobViews = collections.namedtuple('BlobViews', (
    'header', 'body_ints', 'q_src', 'v_src', 'gravity', 'q_mult', 'q_off', 'v_mult', 'body',
    'inertia', 'work', 'subspace', 'qf', 'vf', 'af', 'tauf', 'zero_v', 'spare'))
#: The named views of the equations of motion's part of a blob (see :func:`decode_eom`).
EomViews = collections.namedtuple('EomViews', (
    'column_parent', 'column_body', 'pose', 'column', 'links', 'forces'))


def rows(flat, count, width):
    """
    Return ``flat`` (1-D, contiguous) as ``(count, width)`` rows: a view.

    In Python, ``reshape``. Compiled (``rows_view``), a view made on the spot: numba's
    ``reshape`` calls a helper of its runtime that the optimiser must keep, about 10 ns per
    view a call builds even where the view goes unused.
    """
    return flat.reshape((count, width))


def decode(blob):
    """
    Return the :class:`BlobViews` of ``blob``: views, nothing copied.

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
    return BlobViews(
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
    Return the :class:`EomViews` of ``blob``: views, nothing copied.

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
    return EomViews(
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
        return EYE3.copy() if axis[2] > 0.0 else np.diag([1.0, -1.0, -1.0])
    return axis_angle_to_matrix(k / sin, np.arctan2(sin, axis[2]))


def rot6(E):
    """``rot(E)``: the 6x6 transform of a pure rotation (also its own force transform)."""
    out = np.zeros((6, 6))
    out[:3, :3] = E
    out[3:, 3:] = E
    return out
