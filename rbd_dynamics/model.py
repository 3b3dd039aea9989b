"""
The kinematic tree: links and joints turned into numbered bodies (Featherstone ch. 4).

A :class:`Model` is built once from a :class:`~rbd_dynamics.description.Description` (usually a
URDF). Building it

- picks the root link and orders the tree depth first (children in document order), so that every
  body's parent has a smaller number (``parent[i] < i``, regular numbering);
- merges links attached by ``fixed`` joints into the moving body they hang from, keeping every link
  addressable by name (``link_body``, ``link_X``) for external wrenches;
- turns ``<mimic>`` joints into a linear map from the independent coordinates;
- reads the drive values (effort limits, damping, friction), folding mimic joints' into their
  masters;
- sums inertias into per-body spatial inertias, in body coordinates;

and then issues the warnings the steps collected, in one place.

What never changes and what does. The tree (names, ``parent``, ``Xtree``, joints, the mimic
map, the drive values, gravity, the description's own inertias) is fixed when the model is
built. Two things change at runtime, as Pinocchio keeps its ``Data`` apart from its ``Model``:
payloads (:meth:`Model.set_payload`) and the compiled path (:meth:`Model.compile`). Everything
they change -- the body inertias with the payloads, the per-link inertias, the payloads, the
packed model of the compiled path and the cache of :func:`~rbd_dynamics.payload_wrench` -- lives
in one :class:`RuntimeState`, which is never modified: a change builds a new one under the
model's writer lock and swaps the single reference ``model.runtime``. A reader that takes
``model.runtime`` once therefore sees one consistent set (the packed model always holds the
inertias beside it), whatever other threads swap meanwhile; ``model.inertia``, ``model.packed``
and ``model.payloads`` read the current state, so two of them read one after the other may come
from two states.

Body ``i`` is the child link of the i-th moving joint; the root link and the links fixed to it
form the (immobile) base, number ``-1``.
"""

import math
import os
import sys
import threading
import types
import warnings

import numpy as np

from .dynamics import use_compiled_path
from .joints import JointModel
from .parsers.description import Description, UrdfError
from .parsers.files import read_description_file
from .parsers.urdf import MAX_DESCRIPTION_BYTES, parse_urdf
from .parsers.urdf_parser_py import description_from_urdf_robot
from .spatial import (frame_transform, inertia_problem, inertia_tensor, parameters_from_spatial,
                      rpy_to_matrix, spatial_inertia)


class DescriptionWarning(UserWarning):
    """
    Something in a usable description is ignored or doubtful.

    For example a ``<mimic>`` on a fixed joint; the model loads and lists the message in
    ``model.warnings``.
    """


class InertiaWarning(DescriptionWarning):
    """A link inertia is finite but not physically consistent."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _warn_caller(message, category):
    """
    Warn at the line that asked for the model.

    ``warnings.warn`` pointing at the first frame outside this package's modules, whichever
    constructor the call went through.
    """
    frame = sys._getframe(1)
    level = 2
    while frame is not None and \
            os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


class UnknownLinkError(KeyError, ValueError):
    """A link name that is not part of the model (both a ``KeyError`` and a ``ValueError``)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ''


class Model:
    """
    Rigid-body tree of a robot with a fixed root link.

    Public attributes (see the package contract):
        joint_names: independent joints, in the order of ``q``, ``qd``, ``qdd`` and ``tau``.
        joint_types: URDF type of each independent joint.
        joint_nq, joint_nv: number of position / velocity coordinates of each independent joint.
        link_names: every link of the model (fixed-joint children included), in tree order.
        nq, nv: sizes of ``q`` and of ``qd``/``qdd``/``tau``.
        gravity: ``(3,)`` gravity acceleration in the root link frame [m/s^2].
        mimic: mimic joint name -> ``(independent master, multiplier, offset)``.
        effort_limits: ``(nv,)`` ``<limit effort>`` of each independent joint [N m or N], ``inf``
            where absent or 0.
        damping: ``(nv,)`` viscous friction [N m s/rad or N s/m] (``<dynamics damping>``), with
            the damping of each mimic joint reflected onto its master (times multiplier^2).
        friction: ``(nv,)`` Coulomb friction [N m or N] (``<dynamics friction>``), with each mimic
            joint's reflected onto its master (times abs(multiplier)).
        root_link: name of the root link.
        warnings: tuple of messages about accepted but suspicious input (inconsistent inertias,
            ignored tags), each also issued as a :class:`DescriptionWarning`.
        runtime: the :class:`RuntimeState` in use: everything that changes at runtime, swapped
            as one reference (see the module docstring).
        payloads: link -> :class:`Payload` held by it now (see :meth:`set_payload`), read-only;
            ``runtime.payloads``.

    Featherstone's system model (body ``i`` = child of the i-th moving joint, 0-based):
        nb: number of bodies.
        parent: ``(nb,)`` parent body, -1 for the base.
        joints: :class:`~rbd_dynamics.joints.JointModel` of each body's joint.
        Xtree: ``(nb, 6, 6)`` ``i_X_parent`` at zero joint position (joint frame in parent body).
        inertia: ``(nb, 6, 6)`` spatial inertia of each body in its own coordinates, payloads
            included (``runtime.inertia``).
        body_joint_names: name of each body's joint (mimic joints included).
        body_links: ``(nb,)`` tuple: the link of each body, the child link of its joint. Its
            frame is the body's coordinates; the links merged into the body by fixed joints,
            and their payloads, are part of the body (see :meth:`inertial_parameters`).
        q_start, v_start: first index of each body's coordinates in the full vectors ``qf``/``vf``
            (one entry per body joint, mimic joints included).
        packed: the model packed for the compiled path, ``None`` without numba (or until
            :meth:`compile`); ``runtime.packed``.
    """

    def __init__(self, description, gravity=(0.0, 0.0, -9.81), root_link=None, compiled=True):
        """
        Build the model from a description.

        Prefer :meth:`from_urdf`, :meth:`from_urdf_file` or :meth:`from_description`.

        Parameters
        ----------
        description
            the :class:`~rbd_dynamics.description.Description` to build from.
        gravity
            ``(3,)`` gravity in the root link frame [m/s^2].
        root_link
            the link to use as the fixed root (a sub-tree of the description); ``None`` for
            the description's root.
        compiled
            build the compiled path now (where numba is installed); False: the NumPy
            path until :meth:`compile` is called.

        Raises
        ------
        UrdfError
            the description is unusable (the message names the element).

        """
        gravity = np.array(gravity, dtype=float).reshape(-1)
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ValueError('gravity must be 3 finite numbers, got %s' % gravity.tolist())
        self.gravity = gravity
        self.gravity.setflags(write=False)
        self.name = description.name
        # Each step sets the public attributes it defines and returns what a later step needs;
        # the steps collect their warnings, issued together once the model is whole.
        parent_joint = self._build_tree(description, root_link)
        self._build_bodies(parent_joint)
        notes, v_index = self._build_mimic(description)
        self._build_drive(description, v_index)
        notes += self._build_inertias(description)
        self.warnings = tuple(message for message, _ in notes)
        for message, category in notes:
            _warn_caller(message, category)
        self._writer = threading.Lock()
        self.runtime = RuntimeState(self._urdf_inertia, self._urdf_link_inertia, {}, None)
        if compiled:
            self.compile()

    @property
    def inertia(self):
        """Return the ``(nb, 6, 6)`` body inertias, payloads included (``runtime.inertia``)."""
        return self.runtime.inertia

    @property
    def packed(self):
        """Return the compiled path's packed model, or ``None`` (``runtime.packed``)."""
        return self.runtime.packed

    @property
    def payloads(self):
        """Return the read-only link -> :class:`Payload` map (``runtime.payloads``)."""
        return self.runtime.payloads

    def compile(self, progress=None):  # noqa: A003 (the public name, docs/library.md)
        """
        Build the compiled path and use it from now on.

        Every kernel, the single-state ones and the batch ones, is compiled (or loaded from
        numba's on-disk cache) before the packed model is put in use, so no later call waits
        on a compilation. Nothing to do without numba or when it is done.

        Calls made meanwhile from other threads take the NumPy path and switch when it is
        ready; the numbers are the same. A first compilation on a machine takes seconds.

        Parameters
        ----------
        progress
            ``None``, or called as ``progress(step, done, total)`` before each step of the
            compilation (:data:`rbd_dynamics.compiled.warm_up.WARM_UP_STEPS`).

        Returns
        -------
        True when the compiled path is in use.

        """
        if self.runtime.packed is not None:
            return True
        if use_compiled_path().AVAILABLE:
            from .compiled.packed import PackedModel
            from .compiled.warm_up import warm_up
            try:
                packed = PackedModel(self, self.runtime.inertia)
                warm_up(packed, progress)
                with self._writer:
                    runtime = self.runtime
                    if runtime.inertia is not packed.source_inertia:  # a payload meanwhile
                        packed = packed.with_inertia(runtime.inertia)
                    self.runtime = runtime.replace(packed=packed)
            except Exception as exc:  # a numba that cannot build the kernels: stay correct
                _warn_caller('compiled RNEA unavailable (%s: %s); using the NumPy path'
                             % (type(exc).__name__, exc), RuntimeWarning)
        return self.runtime.packed is not None

    # Payloads ----------------------------------------------------------------------------------

    def set_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """
        Put a rigid payload on ``link`` (replacing the one it held); ``mass = 0`` removes it.

        The payload moves with the link: its inertia is added to the body the link belongs to,
        and :func:`~rbd_dynamics.rnea`, :func:`~rbd_dynamics.gravity_torques` and
        :func:`~rbd_dynamics.payload_wrench` (of any link it is beyond) see it from the next
        call on, on the compiled path without rebuilding the model.

        Threads: a change builds a new :class:`RuntimeState` (inertias, packed model,
        payloads, payload wrench cache) and swaps ``model.runtime``; a call running meanwhile
        on another thread took the old state once and computes wholly with the old payload,
        later calls wholly with the new one.

        Parameters
        ----------
        link
            a link of the model.
        mass
            [kg], finite and >= 0; 0 removes the payload.
        com
            ``(3,)`` centre of mass in the link frame [m].
        inertia
            ``(6,)`` ``ixx, ixy, ixz, iyy, iyz, izz`` about the centre of mass in the
            link's axes [kg m^2] (moments >= 0), or a ``(3, 3)`` matrix.

        Raises
        ------
        UnknownLinkError
            ``link`` is not a link of the model.
        ValueError
            a negative or non-finite value, or wrong sizes.

        """
        self.check_link(link)
        payload = Payload(mass, com, inertia)
        with self._writer:
            payloads = dict(self.runtime.payloads)
            if payload.mass == 0.0:
                payloads.pop(link, None)
            else:
                payloads[link] = payload
            link_inertia = dict(self._urdf_link_inertia)
            inertia = self._urdf_inertia.copy()
            for name, item in payloads.items():
                X = self.link_X[name]
                extra = X.T @ spatial_inertia(item.mass, item.com, item.inertia) @ X
                link_inertia[name] = link_inertia[name] + extra
                if self.link_body[name] >= 0:
                    inertia[self.link_body[name]] += extra
            packed = self.runtime.packed
            if packed is not None:
                packed = packed.with_inertia(inertia)
            self.runtime = RuntimeState(inertia, link_inertia, payloads, packed)

    def clear_payloads(self):
        """Remove every payload."""
        with self._writer:
            if self.runtime.payloads:
                packed = self.runtime.packed
                if packed is not None:
                    packed = packed.with_inertia(self._urdf_inertia)
                self.runtime = RuntimeState(self._urdf_inertia, self._urdf_link_inertia, {},
                                            packed)

    # Construction ------------------------------------------------------------------------------

    @classmethod
    def from_description(cls, description, gravity=(0.0, 0.0, -9.81), root_link=None,
                         compiled=True):
        """Build a model from a :class:`~rbd_dynamics.description.Description`."""
        return cls(description, gravity=gravity, root_link=root_link, compiled=compiled)

    @classmethod
    def from_urdf(cls, urdf_xml_text, gravity=(0.0, 0.0, -9.81), root_link=None,
                  max_bytes=MAX_DESCRIPTION_BYTES, compiled=True):
        """
        Build a model from URDF text.

        Parameters
        ----------
        urdf_xml_text
            the URDF document (``str`` or ``bytes``).
        gravity
            ``(3,)`` gravity in the root link frame [m/s^2].
        root_link
            the link to use as the fixed root (a sub-tree of the URDF); ``None`` for
            the URDF's root.
        max_bytes
            descriptions larger than this are refused [bytes].
        compiled
            build the compiled path now (see :meth:`compile`).

        Raises
        ------
        UrdfError
            the description is unusable (the message names the element).

        """
        return cls(parse_urdf(urdf_xml_text, max_bytes=max_bytes), gravity=gravity,
                   root_link=root_link, compiled=compiled)

    @classmethod
    def from_urdf_robot(cls, robot, gravity=(0.0, 0.0, -9.81), root_link=None, compiled=True):
        """
        Build a model from a robot parsed by urdf_parser_py (``urdfdom_py``).

        Parameters
        ----------
        robot
            a ``urdf_parser_py.urdf.Robot`` (``URDF.from_xml_string(text)``).
        gravity, root_link, compiled
            as for :meth:`from_urdf`.

        Raises
        ------
        UrdfError
            the description is unusable (the message names the element).

        """
        return cls(description_from_urdf_robot(robot), gravity=gravity, root_link=root_link,
                   compiled=compiled)

    @classmethod
    def from_urdf_file(cls, path, gravity=(0.0, 0.0, -9.81), root_link=None,
                       max_bytes=MAX_DESCRIPTION_BYTES, compiled=True, xacro_args=None):
        """
        Build a model from a URDF file, or a xacro file (see :meth:`from_urdf`).

        Parameters
        ----------
        path
            a URDF file; a name ending in ``.xacro`` is expanded with xacro (an optional
            dependency: ``pip install xacro``).
        gravity, root_link, max_bytes, compiled
            as for :meth:`from_urdf`.
        xacro_args
            xacro's ``name:=value`` arguments as ``{name: value}``.

        Raises
        ------
        UrdfError
            the description is unusable, xacro is missing or cannot expand the file.
        OSError
            the file cannot be read.

        """
        data = read_description_file(path, xacro_args=xacro_args, max_bytes=max_bytes)
        return cls.from_urdf(data, gravity=gravity, root_link=root_link, max_bytes=max_bytes,
                             compiled=compiled)

    def _build_tree(self, desc, root_link):
        children = {name: [] for name in desc.links}
        parent_joint = {}
        for joint in desc.joints.values():
            for role, link in (('parent', joint.parent), ('child', joint.child)):
                if link not in desc.links:
                    raise UrdfError('joint %r: %s link %r is not defined'
                                    % (joint.name, role, link))
            if joint.child in parent_joint:
                raise UrdfError('link %r is the child of two joints, %r and %r'
                                % (joint.child, parent_joint[joint.child].name, joint.name))
            parent_joint[joint.child] = joint
            children[joint.parent].append(joint)

        roots = [name for name in desc.links if name not in parent_joint]
        reached = set()
        for root in roots:
            reached.update(_subtree(root, children))
        if len(reached) != len(desc.links):
            loop = [name for name in desc.links if name not in reached]
            raise UrdfError('the joints form a cycle through links %s' % ', '.join(loop[:10]))
        if root_link is None or root_link == '':
            if len(roots) > 1:
                raise UrdfError('the description has %d root links (%s); a URDF has one root '
                                '(root_link can select a sub-tree)'
                                % (len(roots), ', '.join(roots[:10])))
            root_link = roots[0]
        elif root_link not in desc.links:
            raise UrdfError('root_link %r is not a link of the description; links: %s'
                            % (root_link, _listing(desc.links)))
        self.root_link = root_link
        self._children = children  # (subtree_links)
        self.link_names = tuple(_subtree(root_link, children))
        return parent_joint

    def _build_bodies(self, parent_joint):
        link_body = {self.root_link: -1}
        link_X = {self.root_link: np.eye(6)}
        parent, joints, xtree, body_joint_names, body_links = [], [], [], [], []
        for link in self.link_names[1:]:
            joint = parent_joint[link]
            p_body = link_body[joint.parent]
            # parent-body coordinates -> joint frame coordinates
            X = frame_transform(rpy_to_matrix(joint.rpy), joint.xyz) @ link_X[joint.parent]
            if joint.jtype == 'fixed':
                link_body[link] = p_body
                link_X[link] = X
                continue
            link_body[link] = len(parent)
            link_X[link] = np.eye(6)
            parent.append(p_body)
            joints.append(JointModel(joint.jtype, joint.axis, joint.pitch))
            xtree.append(X)
            body_joint_names.append(joint.name)
            body_links.append(link)
        self.nb = len(parent)
        self.parent = np.array(parent, dtype=np.int64).reshape(self.nb)
        self.joints = tuple(joints)
        self.Xtree = np.array(xtree, dtype=float).reshape(self.nb, 6, 6)
        self.body_joint_names = tuple(body_joint_names)
        self.body_links = tuple(body_links)
        self.link_body = link_body
        self.link_X = link_X
        self.q_start = np.cumsum([0] + [j.nq for j in joints])[:-1].astype(np.int64)
        self.v_start = np.cumsum([0] + [j.nv for j in joints])[:-1].astype(np.int64)
        self.nqf = int(sum(j.nq for j in joints))
        self.nvf = int(sum(j.nv for j in joints))

    def _build_mimic(self, desc):
        body_of_joint = {name: b for b, name in enumerate(self.body_joint_names)}
        notes = []
        mimic = {}
        for joint in desc.joints.values():
            if joint.mimic is None:
                continue
            if joint.name not in body_of_joint:
                if joint.jtype == 'fixed' and joint.child in self.link_body:
                    notes.append(('joint %r is fixed; its <mimic> is ignored' % joint.name,
                                  DescriptionWarning))
                continue
            if self.joints[body_of_joint[joint.name]].nv != 1:
                raise UrdfError('joint %r: only 1-DoF joints can mimic, it is %s'
                                % (joint.name, joint.jtype))
            chain = [joint.name]
            multiplier, offset = 1.0, 0.0
            current = joint
            while current.mimic is not None:
                master, k, o = current.mimic
                if master not in desc.joints:
                    raise UrdfError('joint %r: mimics joint %r, which is not defined'
                                    % (current.name, master))
                if master in chain:
                    raise UrdfError('mimic loop: %s' % ' -> '.join(chain + [master]))
                if master not in body_of_joint:
                    why = ('a fixed joint' if desc.joints[master].jtype == 'fixed'
                           else 'outside the model below root_link %r' % self.root_link)
                    raise UrdfError('joint %r: mimics joint %r, which is %s'
                                    % (current.name, master, why))
                if self.joints[body_of_joint[master]].nv != 1:
                    raise UrdfError('joint %r: mimics joint %r, which is not a 1-DoF joint'
                                    % (current.name, master))
                # q_joint = multiplier * q_current + offset and q_current = k q_master + o
                multiplier, offset = multiplier * k, multiplier * o + offset
                chain.append(master)
                current = desc.joints[master]
            mimic[joint.name] = (current.name, multiplier, offset)
        self.mimic = mimic

        independent = [b for b, name in enumerate(self.body_joint_names) if name not in mimic]
        self.joint_names = tuple(self.body_joint_names[b] for b in independent)
        self.joint_types = tuple(desc.joints[n].jtype for n in self.joint_names)
        self.joint_nq = tuple(self.joints[b].nq for b in independent)
        self.joint_nv = tuple(self.joints[b].nv for b in independent)
        self.nq = int(sum(self.joint_nq))
        self.nv = int(sum(self.joint_nv))
        q_index = dict(zip(self.joint_names, np.cumsum((0,) + self.joint_nq)[:-1]))
        v_index = dict(zip(self.joint_names, np.cumsum((0,) + self.joint_nv)[:-1]))

        # qf = q[q_src] * q_mult + q_off;  vf = v[v_src] * v_mult;  tau = fold(tauf)
        q_src, q_mult, q_off, v_src, v_mult = [], [], [], [], []
        for b, name in enumerate(self.body_joint_names):
            master, k, o = mimic.get(name, (name, 1.0, 0.0))
            nq, nv = self.joints[b].nq, self.joints[b].nv
            q_src.extend(range(q_index[master], q_index[master] + nq))
            q_mult.extend([k] * nq)
            q_off.extend([o] * nq)
            v_src.extend(range(v_index[master], v_index[master] + nv))
            v_mult.extend([k] * nv)
        self.q_src = np.array(q_src, dtype=np.int64)
        self.q_mult = np.array(q_mult, dtype=float)
        self.q_off = np.array(q_off, dtype=float)
        self.v_src = np.array(v_src, dtype=np.int64)
        self.v_mult = np.array(v_mult, dtype=float)
        self.has_mimic = bool(mimic)
        return notes, v_index

    def _build_drive(self, desc, v_index):
        # The drive of a mimic joint moves with its master: its damping torque d k qd_master
        # folds into the master as k^2 d, its Coulomb friction f sign(k qd) as |k| f.
        # (a multi-DoF joint's value holds for each of its velocity coordinates)
        for attr, name in (('effort', 'effort_limits'), ('damping', 'damping'),
                           ('friction', 'friction')):
            values = np.empty(self.nv)
            for joint, nv in zip(self.joint_names, self.joint_nv):
                values[v_index[joint]:v_index[joint] + nv] = getattr(desc.joints[joint], attr)
            setattr(self, name, values)
        for name, (master, k, _) in self.mimic.items():
            i = v_index[master]
            self.damping[i] += k * k * desc.joints[name].damping
            self.friction[i] += abs(k) * desc.joints[name].friction
        for array in (self.effort_limits, self.damping, self.friction):
            array.setflags(write=False)

    def _build_inertias(self, desc):
        notes = []
        inertia = np.zeros((self.nb, 6, 6))
        link_inertia = {}
        for name in self.link_names:
            link = desc.links[name]
            problem = inertia_problem(link.inertia)
            if problem:
                notes.append(('link %r: inertia %s' % (name, problem), InertiaWarning))
            X = self.link_X[name]
            # inertia of the link in its body's coordinates: X^T I X (Eq. 2.66)
            body_inertia = X.T @ spatial_inertia(link.mass, link.com, link.inertia) @ X
            link_inertia[name] = body_inertia
            if self.link_body[name] >= 0:
                inertia[self.link_body[name]] += body_inertia
        inertia.setflags(write=False)
        self._urdf_inertia = inertia
        self._urdf_link_inertia = link_inertia
        # a wrench in link coordinates, moved to body coordinates: f_B = X^T f_L
        self.link_force_to_body = {name: X.T for name, X in self.link_X.items()}
        return notes

    # Queries -------------------------------------------------------------------------------------

    def inertial_parameters(self):
        """
        Return the ten inertial parameters of every body, payloads included.

        Body ``i`` is expressed in the frame of link ``body_links[i]``; its parameters are
        ``[m, m cx, m cy, m cz, ixx, ixy, ixz, iyy, iyz, izz]``: mass [kg], first moment
        [kg m] and rotational inertia [kg m^2] about that frame's origin, in its axes. These
        are the columns of :func:`~rbd_dynamics.regressor`: ``rnea == Y @ pi``.

        Returns
        -------
        ``(10 * nb,)`` parameters, body after body (a new array).

        """
        return parameters_from_spatial(self.runtime.inertia).reshape(-1)

    def check_link(self, link):
        """Raise :class:`UnknownLinkError` (a ``KeyError`` and ``ValueError``) for a non-link."""
        if link not in self.link_body:
            raise UnknownLinkError('unknown link %r; links of the model: %s'
                                   % (link, _listing(self.link_names)))

    def subtree_links(self, link):
        """Links at and beyond ``link`` (everything attached below it, through any joint)."""
        self.check_link(link)
        return tuple(_subtree(link, self._children))

    def __repr__(self):
        return ('Model(%r, root_link=%r, nq=%d, nv=%d, bodies=%d, links=%d)'
                % (self.name, self.root_link, self.nq, self.nv, self.nb, len(self.link_names)))


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


def _subtree(root, children):
    """Links of the sub-tree at ``root`` in depth-first pre-order, children in joint order."""
    order = []
    stack = [root]
    while stack:
        link = stack.pop()
        order.append(link)
        stack.extend(joint.child for joint in reversed(children[link]))
    return order


def _listing(names, limit=20):
    names = list(names)
    text = ', '.join(names[:limit])
    return text + (', ... (%d in all)' % len(names) if len(names) > limit else '')


__all__ = ['Description', 'InertiaWarning', 'Model', 'Payload', 'RuntimeState', 'UnknownLinkError',
           'UrdfError']
