"""
Building a model's tree from a description: the steps of :class:`~rbd_dynamics.model.Model`.

Each step sets the public attributes of the model it defines (see :class:`~.model.Model`) and
returns what a later step needs; the steps collect their warnings, which the model issues
together once it is whole:

- :func:`floating_description` (a floating base only) puts a free joint above the root link;
- :func:`build_tree` picks the root link and orders the tree depth first (children in
  document order), so that every body's parent has a smaller number (``parent[i] < i``);
- :func:`build_bodies` merges links attached by ``fixed`` joints into the moving body they hang
  from, keeping every link addressable by name (``link_body``, ``link_X``);
- :func:`build_mimic` turns ``<mimic>`` joints into a linear map from the independent
  coordinates;
- :func:`build_drive` reads the drive values (effort limits, damping, friction), folding mimic
  joints' into their masters;
- :func:`build_inertias` sums inertias into per-body spatial inertias, in body coordinates.
"""

import numpy as np

from .joints import JointModel
from .parsers.description import Description, UrdfError
from .spatial import frame_transform, inertia_problem, rpy_to_matrix, spatial_inertia


class DescriptionWarning(UserWarning):
    """
    Something in a usable description is ignored or doubtful.

    For example a ``<mimic>`` on a fixed joint; the model loads and lists the message in
    ``model.warnings``.
    """


class InertiaWarning(DescriptionWarning):
    """A link inertia is finite but not physically consistent."""


#: The names a floating base's free joint and the fixed frame above it take (Pinocchio's and
#: ROS's usual ones; a suffix ``_1``, ``_2``... where the description uses the name already).
BASE_JOINT = 'root_joint'
WORLD_LINK = 'world'


def floating_description(desc, root_link):
    """
    Return ``(description, root_link, base_joint)`` with a free joint above the root link.

    The root link (``root_link``, or the description's root) gets a ``floating`` joint
    (:data:`BASE_JOINT`) from a massless fixed frame (:data:`WORLD_LINK`), which becomes the
    model's root. A description whose root already carries one -- a massless root with a single
    ``floating`` joint below it, or a ``root_link`` whose parent joint is ``floating`` -- is used
    as it is, that joint being the base's.
    """
    parent_joint = {joint.child: joint for joint in desc.joints.values()}
    if root_link in (None, ''):
        roots = [name for name in desc.links if name not in parent_joint]
        if len(roots) != 1:
            return desc, root_link, None  # build_tree says what is wrong
        root_link = roots[0]
        below = [joint for joint in desc.joints.values() if joint.parent == root_link]
        if (len(below) == 1 and below[0].jtype == 'floating'
                and desc.links[root_link].mass == 0.0):
            return desc, root_link, _at_origin(below[0])
    elif root_link in parent_joint and parent_joint[root_link].jtype == 'floating':
        joint = parent_joint[root_link]
        return desc, joint.parent, _at_origin(joint)
    if root_link not in desc.links:
        return desc, root_link, None
    floating = Description(desc.name)
    floating.links = dict(desc.links)
    floating.joints = dict(desc.joints)
    world = _unused(WORLD_LINK, desc.links)
    joint = _unused(BASE_JOINT, desc.joints)
    floating.add_link(world)
    floating.add_joint(joint, 'floating', world, root_link)
    return floating, world, joint


def _at_origin(joint):
    """Return the name of a base's ``floating`` joint; refuse one with an ``<origin>``."""
    if np.any(joint.xyz != 0.0) or np.any(joint.rpy != 0.0):
        raise UrdfError('joint %r: a floating base needs its floating joint at the origin of '
                        'its parent (xyz and rpy 0)' % joint.name)
    return joint.name


def _unused(name, taken):
    """Return ``name``, or ``name_1``, ``name_2``... the first not in ``taken``."""
    candidate, count = name, 0
    while candidate in taken:
        count += 1
        candidate = '%s_%d' % (name, count)
    return candidate


def build_tree(model, desc, root_link):
    """Check the joints' tree, pick the root, order the links depth first; the parent joints."""
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
        reached.update(subtree(root, children))
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
                        % (root_link, listing(desc.links)))
    model.root_link = root_link
    model.link_children = children
    model.link_names = tuple(subtree(root_link, children))
    return parent_joint


def build_bodies(model, parent_joint):
    """Give each moving joint its body (``parent[i] < i``); merge links fixed to a body into it."""
    link_body = {model.root_link: -1}
    link_X = {model.root_link: np.eye(6)}
    parent, joints, xtree, body_joint_names, body_links = [], [], [], [], []
    for link in model.link_names[1:]:
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
    model.nb = len(parent)
    model.parent = np.array(parent, dtype=np.int64).reshape(model.nb)
    model.joints = tuple(joints)
    model.Xtree = np.array(xtree, dtype=float).reshape(model.nb, 6, 6)
    model.body_joint_names = tuple(body_joint_names)
    model.body_links = tuple(body_links)
    model.link_body = link_body
    model.link_X = link_X
    model.q_start = np.cumsum([0] + [j.nq for j in joints])[:-1].astype(np.int64)
    model.v_start = np.cumsum([0] + [j.nv for j in joints])[:-1].astype(np.int64)
    model.nqf = int(sum(j.nq for j in joints))
    model.nvf = int(sum(j.nv for j in joints))


def build_mimic(model, desc):
    """Resolve the ``<mimic>`` chains into the map from independent coordinates; notes, indices."""
    body_of_joint = {name: b for b, name in enumerate(model.body_joint_names)}
    notes = []
    mimic = {}
    for joint in desc.joints.values():
        if joint.mimic is None:
            continue
        if joint.name not in body_of_joint:
            if joint.jtype == 'fixed' and joint.child in model.link_body:
                notes.append(('joint %r is fixed; its <mimic> is ignored' % joint.name,
                              DescriptionWarning))
            continue
        if model.joints[body_of_joint[joint.name]].nv != 1:
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
                       else 'outside the model below root_link %r' % model.root_link)
                raise UrdfError('joint %r: mimics joint %r, which is %s'
                                % (current.name, master, why))
            if model.joints[body_of_joint[master]].nv != 1:
                raise UrdfError('joint %r: mimics joint %r, which is not a 1-DoF joint'
                                % (current.name, master))
            # q_joint = multiplier * q_current + offset and q_current = k q_master + o
            multiplier, offset = multiplier * k, multiplier * o + offset
            chain.append(master)
            current = desc.joints[master]
        mimic[joint.name] = (current.name, multiplier, offset)
    model.mimic = mimic

    independent = [b for b, name in enumerate(model.body_joint_names) if name not in mimic]
    model.joint_names = tuple(model.body_joint_names[b] for b in independent)
    model.joint_types = tuple(desc.joints[n].jtype for n in model.joint_names)
    model.joint_nq = tuple(model.joints[b].nq for b in independent)
    model.joint_nv = tuple(model.joints[b].nv for b in independent)
    model.nq = int(sum(model.joint_nq))
    model.nv = int(sum(model.joint_nv))
    q_index = dict(zip(model.joint_names, np.cumsum((0,) + model.joint_nq)[:-1]))
    v_index = dict(zip(model.joint_names, np.cumsum((0,) + model.joint_nv)[:-1]))

    # qf = q[q_src] * q_mult + q_off;  vf = v[v_src] * v_mult;  tau = fold(tauf)
    q_src, q_mult, q_off, v_src, v_mult = [], [], [], [], []
    for b, name in enumerate(model.body_joint_names):
        master, k, o = mimic.get(name, (name, 1.0, 0.0))
        nq, nv = model.joints[b].nq, model.joints[b].nv
        q_src.extend(range(q_index[master], q_index[master] + nq))
        q_mult.extend([k] * nq)
        q_off.extend([o] * nq)
        v_src.extend(range(v_index[master], v_index[master] + nv))
        v_mult.extend([k] * nv)
    model.q_src = np.array(q_src, dtype=np.int64)
    model.q_mult = np.array(q_mult, dtype=float)
    model.q_off = np.array(q_off, dtype=float)
    model.v_src = np.array(v_src, dtype=np.int64)
    model.v_mult = np.array(v_mult, dtype=float)
    model.has_mimic = bool(mimic)
    return notes, v_index


def build_drive(model, desc, v_index):
    """Read the effort limits, damping and friction, folding mimic joints' into their masters."""
    # The drive of a mimic joint moves with its master: its damping torque d k qd_master
    # folds into the master as k^2 d, its Coulomb friction f sign(k qd) as |k| f.
    # (a multi-DoF joint's value holds for each of its velocity coordinates)
    for attr, name in (('effort', 'effort_limits'), ('damping', 'damping'),
                       ('friction', 'friction')):
        values = np.empty(model.nv)
        for joint, nv in zip(model.joint_names, model.joint_nv):
            values[v_index[joint]:v_index[joint] + nv] = getattr(desc.joints[joint], attr)
        setattr(model, name, values)
    for name, (master, k, _) in model.mimic.items():
        i = v_index[master]
        model.damping[i] += k * k * desc.joints[name].damping
        model.friction[i] += abs(k) * desc.joints[name].friction
    for array in (model.effort_limits, model.damping, model.friction):
        array.setflags(write=False)


def build_inertias(model, desc):
    """Sum the links' inertias into the bodies' (body coordinates); notes of doubtful ones."""
    notes = []
    inertia = np.zeros((model.nb, 6, 6))
    link_inertia = {}
    for name in model.link_names:
        link = desc.links[name]
        problem = inertia_problem(link.inertia)
        if problem:
            notes.append(('link %r: inertia %s' % (name, problem), InertiaWarning))
        X = model.link_X[name]
        # inertia of the link in its body's coordinates: X^T I X (Eq. 2.66)
        body_inertia = X.T @ spatial_inertia(link.mass, link.com, link.inertia) @ X
        link_inertia[name] = body_inertia
        if model.link_body[name] >= 0:
            inertia[model.link_body[name]] += body_inertia
    inertia.setflags(write=False)
    model.description_inertia = inertia
    model.description_link_inertia = link_inertia
    # a wrench in link coordinates, moved to body coordinates: f_B = X^T f_L
    model.link_force_to_body = {name: X.T for name, X in model.link_X.items()}
    return notes


def subtree(root, children):
    """Links of the sub-tree at ``root`` in depth-first pre-order, children in joint order."""
    order = []
    stack = [root]
    while stack:
        link = stack.pop()
        order.append(link)
        stack.extend(joint.child for joint in reversed(children[link]))
    return order


def listing(names, limit=20):
    """Return names as a message lists them: the first ``limit``, and how many in all."""
    names = list(names)
    text = ', '.join(names[:limit])
    return text + (', ... (%d in all)' % len(names) if len(names) > limit else '')
