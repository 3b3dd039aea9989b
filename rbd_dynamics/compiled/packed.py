"""A model packed for the kernels, its single-state entry points and the gate before them."""

import copy

import numpy as np

from . import EOM_AVAILABLE
from .layout import (B_AXIS, B_E1, B_E2, B_ET, B_Q, B_RT, B_SA, B_SL, BI_JTYPE, BI_PARENT,
                     BI_Q_START, BI_V_START, BlobViews, BODY_FLOATS, BODY_INTS, COLUMN_FLOATS,
                     decode, decode_eom, EOM_ENTRIES, EomViews, EYE3, F8, H_NB, H_NQ, H_NQF, H_NV,
                     H_NVF, HEADER, IN_H, IN_MASS, IN_ROT, INERTIA_FLOATS, JT_HELICAL, JT_PLANAR,
                     JT_PRISMATIC, JT_REVOLUTE, JTYPE_CODES, L_BODY, L_E, L_R, LINK_FLOATS,
                     MAP_Q_MULT, N_OFFSETS, ONE_DOF, POSE_FLOATS, REGIONS, rot6, SWAP, WORK_FLOATS,
                     z_to_axis)
from .warm_up import CompileFirst, ENTRY
from ..spatial import plux_parts


class PackedModel:
    """
    Flat arrays of a :class:`~rbd_dynamics.model.Model` for the compiled kernels.

    Attributes
    ----------
    blob
        the packed model and its workspace.
    layout
        the :class:`BlobViews` (named views) of ``blob``; each of its fields is also an
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
    jacobian_codes
        frame (``'world'``, ``'local'``) -> link -> the ``code`` of :func:`jacobian1`: twice
        the link's row, plus one for ``'local'`` (a single call's two lookups, where an
        unknown frame or link raises ``KeyError``).
    square_shape, jacobian_shape, regressor_shape
        the shapes of one state's ``M`` and ``C``, ``J`` and ``Y``.

    """

    #: the equations of motion use this packed model (:data:`EOM_AVAILABLE`)
    eom_compiled = EOM_AVAILABLE
    # Slots: the single-state calls read a few attributes around a microsecond of kernel, and
    # a slot is the quickest attribute there is.
    __slots__ = ('nb', 'nqf', 'nvf', 'nq', 'nv', 'rotation', 'link_body', 'link_wrench_to_body',
                 'link_index', 'jacobian_codes',
                 'blob', 'layout',
                 'source_inertia', 'zero_fext',
                 'rnea1', 'gravity1', 'body_force1', 'mass1', 'coriolis1', 'jacobian1',
                 'regressor1', 'pose1', 'acceleration1', 'task1', 'floating1', 'square_shape',
                 'jacobian_shape', 'regressor_shape', 'eom_layout') + BlobViews._fields \
        + EomViews._fields

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
        rotation = np.array([z_to_axis(j.axis) if c <= ONE_DOF else EYE3
                             for j, c in zip(model.joints, codes)]).reshape(nb, 3, 3)
        body = np.zeros((nb, BODY_FLOATS))
        for i, joint in enumerate(model.joints):
            E, r = plux_parts(model.Xtree[i])
            Qp = rotation[model.parent[i]] if model.parent[i] >= 0 else EYE3
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
                    body[i, B_E1:B_E1 + 3] = joint.plane[:, 0]
                    body[i, B_E2:B_E2 + 3] = joint.plane[:, 1]
        self.rotation = rotation
        self.link_body = model.link_body
        self.link_wrench_to_body = {
            link: rot6(rotation[b].T) @ model.link_force_to_body[link] @ SWAP
            for link, b in model.link_body.items() if b >= 0}
        self.link_index = {link: k for k, link in enumerate(model.link_names)}
        self.jacobian_codes = {
            frame: {link: 2 * k + local for link, k in self.link_index.items()}
            for local, frame in enumerate(('world', 'local'))}
        links = np.zeros((len(model.link_names), LINK_FLOATS))
        for k, link in enumerate(model.link_names):
            b = model.link_body[link]
            links[k, L_BODY] = b
            E, r = plux_parts(model.link_X[link])
            if b >= 0:
                # link_X_packed = rot(E) xlt(r) rot(Q) = rot(E Q) xlt(Q^T r)
                links[k, L_E:L_E + 9] = (E @ rotation[b]).reshape(9)
                links[k, L_R:L_R + 3] = rotation[b].T @ r
            else:  # on the base: link_X_root
                links[k, L_E:L_E + 9] = E.reshape(9)
                links[k, L_R:L_R + 3] = r

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
        self.bind_eom()
        # the shapes of the equations of motion's single-state results
        self.square_shape = (model.nv, model.nv)
        self.jacobian_shape = (6, model.nv)
        self.regressor_shape = (model.nv, INERTIA_FLOATS * nb)

    def bind_entry_points(self):
        """Take the compiled single-state entry points of :data:`ENTRY` (after warm_up)."""
        self.rnea1 = ENTRY['rnea1']
        self.gravity1 = ENTRY['gravity1']
        self.body_force1 = ENTRY['body_force1']
        self.bind_eom()

    def bind_eom(self):
        """Take the equations of motion's entry points, or stubs that compile them first."""
        for name in EOM_ENTRIES:
            setattr(self, name, ENTRY[name] if name in ENTRY else CompileFirst(self, name))

    def _views(self):
        """Name the views of ``blob``: ``layout`` and an attribute for each of its fields."""
        self.layout = decode(self.blob)
        for name, view in zip(BlobViews._fields, self.layout):
            setattr(self, name, view)
        self.eom_layout = decode_eom(self.blob)
        for name, view in zip(EomViews._fields, self.eom_layout):
            setattr(self, name, view)

    def pack_inertia(self, inertia):
        """
        Pack ``(nb, 6, 6)`` spatial inertias into ``(nb, 10)`` rows.

        The inertias are in model body coordinates; each row holds the mass, ``h = m c`` and
        the rotational inertia at the origin, in packed body coordinates.
        """
        out = np.zeros((inertia.shape[0], INERTIA_FLOATS))
        for i, Q in enumerate(self.rotation):
            R = rot6(Q)
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
        other.bind_eom()
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
        if not (q.dtype is F8 and q.ndim == 1
                and (qd is None or (qd.dtype is F8 and qd.ndim == 1))
                and (qdd is None or (qdd.dtype is F8 and qdd.ndim == 1))):
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
                wrench.dtype is not F8:
            return None
        if body >= 0:  # (on the base it is carried by the world: no joint torque)
            out[body] += to_body[link] @ wrench
    return out
