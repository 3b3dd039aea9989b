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

import os
import sys
import threading
import warnings

import numpy as np

from .dynamics import use_compiled_path
from .parsers.description import Description, UrdfError
from .parsers.files import read_description_file
from .parsers.urdf import MAX_DESCRIPTION_BYTES, parse_urdf
from .parsers.urdf_parser_py import description_from_urdf_robot
from .runtime import Payload, RuntimeState
from .spatial import parameters_from_spatial, spatial_inertia
from .tree import build_bodies, build_drive, build_inertias, build_mimic, build_tree, \
    DescriptionWarning, floating_description, InertiaWarning, listing, subtree


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
        root_link: name of the root link: the fixed frame (with a floating base, the frame
            above the base's free joint).
        base_joint: the name of the floating base's free joint (a ``floating`` joint, the
            first of ``joint_names``: ``q[:7] = [x y z qx qy qz qw]``, ``qd[:6] = [v w]`` in
            the base link's frame), ``None`` for a fixed base.
        base_link: the link that moves freely (the free joint's child); the root link for a
            fixed base.
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

    def __init__(self, description, gravity=(0.0, 0.0, -9.81), root_link=None, compiled=True,
                 floating_base=False):
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
        floating_base
            the root link moves: a ``floating`` joint (:attr:`base_joint`) above it, first of
            the coordinates; a ``floating`` joint the description has above it is used as it
            is.

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
        self.base_joint = None
        if floating_base:
            description, root_link, self.base_joint = floating_description(description,
                                                                           root_link)
        parent_joint = build_tree(self, description, root_link)
        build_bodies(self, parent_joint)
        self.base_link = self.root_link if self.base_joint is None else \
            description.joints[self.base_joint].child
        notes, v_index = build_mimic(self, description)
        build_drive(self, description, v_index)
        notes += build_inertias(self, description)
        self.warnings = tuple(message for message, _ in notes)
        for message, category in notes:
            _warn_caller(message, category)
        self._writer = threading.Lock()
        self.runtime = RuntimeState(self.description_inertia, self.description_link_inertia, {},
                                    None)
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
            link_inertia = dict(self.description_link_inertia)
            inertia = self.description_inertia.copy()
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
                    packed = packed.with_inertia(self.description_inertia)
                self.runtime = RuntimeState(self.description_inertia,
                                            self.description_link_inertia, {}, packed)

    # Construction ------------------------------------------------------------------------------

    @classmethod
    def from_description(cls, description, gravity=(0.0, 0.0, -9.81), root_link=None,
                         compiled=True, floating_base=False):
        """Build a model from a :class:`~rbd_dynamics.description.Description`."""
        return cls(description, gravity=gravity, root_link=root_link, compiled=compiled,
                   floating_base=floating_base)

    @classmethod
    def from_urdf(cls, urdf_xml_text, gravity=(0.0, 0.0, -9.81), root_link=None,
                  max_bytes=MAX_DESCRIPTION_BYTES, compiled=True, floating_base=False):
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
        floating_base
            the root link moves: a free joint above it (see :class:`Model`).

        Raises
        ------
        UrdfError
            the description is unusable (the message names the element).

        """
        return cls(parse_urdf(urdf_xml_text, max_bytes=max_bytes), gravity=gravity,
                   root_link=root_link, compiled=compiled, floating_base=floating_base)

    @classmethod
    def from_urdf_robot(cls, robot, gravity=(0.0, 0.0, -9.81), root_link=None, compiled=True,
                        floating_base=False):
        """
        Build a model from a robot parsed by urdf_parser_py (``urdfdom_py``).

        Parameters
        ----------
        robot
            a ``urdf_parser_py.urdf.Robot`` (``URDF.from_xml_string(text)``).
        gravity, root_link, compiled, floating_base
            as for :meth:`from_urdf`.

        Raises
        ------
        UrdfError
            the description is unusable (the message names the element).

        """
        return cls(description_from_urdf_robot(robot), gravity=gravity, root_link=root_link,
                   compiled=compiled, floating_base=floating_base)

    @classmethod
    def from_urdf_file(cls, path, gravity=(0.0, 0.0, -9.81), root_link=None,
                       max_bytes=MAX_DESCRIPTION_BYTES, compiled=True, xacro_args=None,
                       floating_base=False):
        """
        Build a model from a URDF file, or a xacro file (see :meth:`from_urdf`).

        Parameters
        ----------
        path
            a URDF file; a name ending in ``.xacro`` is expanded with xacro (an optional
            dependency: ``pip install xacro``).
        gravity, root_link, max_bytes, compiled, floating_base
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
                             compiled=compiled, floating_base=floating_base)

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
                                   % (link, listing(self.link_names)))

    def subtree_links(self, link):
        """Links at and beyond ``link`` (everything attached below it, through any joint)."""
        self.check_link(link)
        return tuple(subtree(link, self.link_children))

    def __repr__(self):
        return ('Model(%r, root_link=%r, nq=%d, nv=%d, bodies=%d, links=%d)'
                % (self.name, self.root_link, self.nq, self.nv, self.nb, len(self.link_names)))


__all__ = ['Description', 'DescriptionWarning', 'InertiaWarning', 'Model', 'Payload',
           'RuntimeState', 'UnknownLinkError', 'UrdfError']
