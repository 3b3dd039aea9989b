"""
Real robot descriptions from example-robot-data, and Pinocchio models mapped to ours by name.

example-robot-data is found, in this order, through its Python module where the installed version
has one (``example_robot_data.robots_loader.EXAMPLE_ROBOT_DATA_MODEL_DIR``), as the Python
registry package of the same name (6.0.0 installs the URDFs under
``<site-packages>/cmeel.prefix/share/example-robot-data/robots``), or as a ROS package
(``<prefix>/share/example-robot-data/robots`` for each prefix of ``AMENT_PREFIX_PATH``).
Pinocchio (``pin``) is the independent reference; both are test-only dependencies, and nothing
here imports Pinocchio: callers pass the module in.
"""

import glob
import os
import sys
import warnings
import xml.etree.ElementTree as ET

import numpy as np

import rbd_dynamics as rbd

# Relative paths below the robots directory, with what each one brings to the comparison.
CROSS_CHECK = (
    # arms
    'double_pendulum_description/urdf/double_pendulum.urdf',  # 2 revolute joints, no fixed link
    'double_pendulum_description/urdf/double_pendulum_continuous.urdf',  # continuous joints
    'asr_twodof_description/urdf/TwoDofs.urdf',  # planar 2-DoF arm
    'finger_edu_description/robots/finger_edu.urdf',  # 3-DoF finger, off-axis joint frames
    'panda_description/urdf/panda.urdf',  # 7-DoF arm, prismatic fingers, one mimic finger
    'ur_description/urdf/ur3_robot.urdf',  # 6-DoF arms, fixed base and tool frames
    'ur_description/urdf/ur5_robot.urdf',
    'ur_description/urdf/ur10_robot.urdf',
    'ur_description/urdf/ur5_gripper.urdf',  # arm + gripper links on fixed joints
    'kinova_description/robots/kinova.urdf',  # continuous and revolute joints mixed
    'z1_description/urdf/z1.urdf',
    'xarm_description/urdf/xarm7.urdf',
    'so_arm_description/urdf/so101.urdf',  # small arm, rotated joint frames
    'hextilt_description/urdf/hextilt_flying_arm_5.urdf',  # arm under an aerial platform
    # hands and grippers
    'allegro_hand_description/urdf/allegro_right_hand.urdf',  # 16-DoF hand, four branches
    'baxter_description/urdf/baxter.urdf',  # two arms, prismatic grippers with mimic fingers
    # legged robots (fixed base here; floating base in test_floating_base)
    'solo_description/robots/solo12.urdf',
    'anymal_c_simple_description/urdf/anymal.urdf',  # inconsistent inertias, many fixed frames
    'anymal_b_simple_description/robots/anymal-kinova.urdf',  # quadruped with an arm
    'hyq_description/robots/hyq_no_sensors.urdf',
    'go1_description/urdf/go1.urdf',
    'go2_description/urdf/go2.urdf',
    'a1_description/urdf/a1.urdf',
    'b1_description/urdf/b1-z1.urdf',  # quadruped with an arm
    'bolt_description/robots/bolt.urdf',  # biped
    # humanoids
    'talos_data/robots/talos_reduced.urdf',  # 32 joints, no mimic
    'talos_data/robots/talos_full_v2.urdf',  # grippers with 12 mimic joints
    'romeo_description/urdf/romeo.urdf',  # hands with 22 mimic joints
    'icub_description/robots/icub.urdf',
    'g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf',  # 43 joints with the hands
    'human_description/robots/human.urdf',  # 36 revolute joints, no fixed joint
    'centauro_description/urdf/centauro.urdf',  # wheeled legs and two arms, 39 joints
    # mobile manipulators
    'pr2_description/urdf/pr2.urdf',  # prismatic torso, continuous joints, 10 mimic joints
    'tiago_description/robots/tiago.urdf',  # prismatic torso, continuous wheels, hand
    'tiago_pro_description/robots/tiago_pro.urdf',  # continuous joints and mimic grippers
    'tiago_description/robots/tiago_dual.urdf',  # two arms and hands, 101 joints
)

# Descriptions shipped by example-robot-data 6.0.0 that are not usable, and why.
BROKEN = {
    'ur_description/urdf/ur3.urdf': 'an empty <robot> (xacro output without any link)',
    'alex_description/urdf/alex_psyonic_hands.urdf':
        'mimic joints of a joint that does not exist (index_q1)',
}

# Name of the floating joint that :func:`floating_urdf` adds (Pinocchio's free-flyer default).
FLOATING_JOINT = 'root_joint'
WORLD_LINK = 'world'


def _candidates():
    try:
        from example_robot_data.robots_loader import EXAMPLE_ROBOT_DATA_MODEL_DIR
        yield EXAMPLE_ROBOT_DATA_MODEL_DIR
    except Exception:  # no such module, or a version without it
        pass
    for prefix in sys.path:
        yield os.path.join(prefix, 'cmeel.prefix', 'share', 'example-robot-data', 'robots')
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix:
            yield os.path.join(prefix, 'share', 'example-robot-data', 'robots')


def robots_directory():
    """Return the example-robot-data ``robots`` directory, or ``None`` when it is not installed."""
    for path in _candidates():
        if path and os.path.isdir(path):
            return path
    return None


def ur10_path():
    """Return example-robot-data's UR10 description (skip the test where it is not installed)."""
    import pytest
    root = robots_directory()
    if root is None:
        pytest.skip('example-robot-data is not installed')
    return os.path.join(root, 'ur_description', 'urdf', 'ur10_robot.urdf')


def all_urdfs():
    """Every URDF example-robot-data ships (absolute paths, sorted), broken ones included."""
    root = robots_directory()
    if root is None:
        return []
    return sorted(glob.glob(os.path.join(root, '**', '*.urdf'), recursive=True))


def robot_id(path):
    """
    Return a short unique name for a description: ``'panda'``, ``'anymal_c_simple/anymal'``.

    Parameters
    ----------
    path
        path of the URDF, relative to the robots directory or absolute.

    """
    root = robots_directory()
    if root is not None and os.path.isabs(path):
        path = os.path.relpath(path, root)
    package = path.replace(os.sep, '/').split('/')[0]
    package = package[:-len('_description')] if package.endswith('_description') else package
    stem = os.path.splitext(os.path.basename(path))[0]
    return package if stem == package else '%s/%s' % (package, stem)


def load(path, **kwargs):
    """Our model of ``path``, description warnings silenced (real descriptions have them)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf_file(path, **kwargs)


def floating_urdf(path):
    """
    Return the description at ``path`` on a floating base.

    The description at ``path`` as URDF text, its root on a ``floating`` joint from a new
    ``world`` link (joint :data:`FLOATING_JOINT`, identity origin).
    """
    robot = ET.parse(path).getroot()
    children = {joint.find('child').get('link') for joint in robot.findall('joint')}
    roots = [link.get('name') for link in robot.findall('link')
             if link.get('name') not in children]
    assert len(roots) == 1, roots
    ET.SubElement(robot, 'link', name=WORLD_LINK)
    joint = ET.SubElement(robot, 'joint', name=FLOATING_JOINT, type='floating')
    ET.SubElement(joint, 'parent', link=WORLD_LINK)
    ET.SubElement(joint, 'child', link=roots[0])
    return ET.tostring(robot, encoding='unicode')


def has_mimic_joints(path):
    """Tell whether a moving joint of the description at ``path`` has a ``<mimic>`` tag."""
    return any(joint.find('mimic') is not None and joint.get('type') != 'fixed'
               for joint in ET.parse(path).getroot().iter('joint'))


def masters_first(path):
    """
    Return the description at ``path`` with each mimic master met first.

    The description at ``path`` as URDF text, the joints above each mimic master renamed
    (``'0'`` prepended) so that the master's branch comes first in depth-first order.

    Pinocchio's native mimic joints need the master before the mimic joint in that order,
    and urdfdom orders the children of a link by joint name: TALOS and Romeo name some mimic
    joints before their master's branch. The dynamics do not depend on names; the two models
    built from this text compare by name as usual.
    """
    robot = ET.parse(path).getroot()
    joints = robot.findall('joint')
    masters = {mimic.get('joint') for joint in joints for mimic in joint.findall('mimic')}
    below = {}
    for joint in joints:
        below.setdefault(joint.find('parent').get('link'), []).append(joint)
    holds = {}

    def holds_master(joint):
        name = joint.get('name')
        if name not in holds:
            child = joint.find('child').get('link')
            holds[name] = name in masters or any(holds_master(j) for j in below.get(child, ()))
        return holds[name]

    renamed = {joint.get('name'): '0' + joint.get('name') for joint in joints
               if holds_master(joint)}
    for joint in joints:
        joint.set('name', renamed.get(joint.get('name'), joint.get('name')))
        for mimic in joint.findall('mimic'):
            mimic.set('joint', renamed.get(mimic.get('joint'), mimic.get('joint')))
    return ET.tostring(robot, encoding='unicode')


class PinocchioPair:
    """
    Our model and Pinocchio's of one URDF, with the maps between their coordinates.

    Joints are matched by name. Pinocchio represents continuous joints by ``(cos, sin)`` (nq 2,
    nv 1); a URDF ``floating`` joint and Pinocchio's free flyer share the layout ``q = [x y z
    qx qy qz qw]``, velocity ``[v; w]`` of the child frame in the child frame. With
    ``mimic=False`` (Pinocchio's default) a mimic joint is an independent joint there: it gets
    ``multiplier * master + offset`` and its torque is folded into the master's entry
    (``tau[master] += multiplier * tau[mimic]``); with ``mimic=True`` Pinocchio's own mimic joints
    do both. External forces are per joint, in the joint frame.

    Parameters
    ----------
    path
        the URDF file.
    pin
        the ``pinocchio`` module.
    floating
        put the robot on a floating joint (ours: a URDF ``floating`` joint from a new
        ``world`` link; Pinocchio: ``JointModelFreeFlyer``).
    mimic
        build Pinocchio's model with its native mimic joints.
    gravity
        ``(3,)`` gravity for both models, in the root frame [m/s^2].

    """

    def __init__(self, path, pin, floating=False, mimic=False, gravity=(0.0, 0.0, -9.81)):
        self.pin = pin
        self.path = path
        gravity = np.asarray(gravity, dtype=float)
        # links of ours that Pinocchio does not have: the immobile world link of a floating base
        self.extra_links = {WORLD_LINK} if floating else set()
        if floating:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', rbd.DescriptionWarning)
                self.model = rbd.Model.from_urdf(floating_urdf(path), gravity=gravity)
            self.pin_model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(),
                                                    FLOATING_JOINT, mimic=mimic)
        else:
            self.model = load(path, gravity=gravity)
            self.pin_model = pin.buildModelFromUrdf(path, mimic=mimic)
        # Pinocchio's gravity is a spatial motion; its linear part is the acceleration
        assert np.array_equal(self.model.gravity, gravity), self.model.gravity
        self.pin_model.gravity = pin.Motion(gravity, np.zeros(3))
        self.pin_data = self.pin_model.createData()
        ours = self.model
        self.index_q = {}
        self.index_v = {}
        q0 = 0
        v0 = 0
        for name, nq, nv in zip(ours.joint_names, ours.joint_nq, ours.joint_nv):
            self.index_q[name] = slice(q0, q0 + nq)
            self.index_v[name] = slice(v0, v0 + nv)
            q0 += nq
            v0 += nv
        # (pin joint, name, master, multiplier, offset) of every joint Pinocchio has coordinates
        # for; Pinocchio's native mimic joints have none.
        self.joints = []
        pin_names = set()
        for jid in range(1, self.pin_model.njoints):
            name = self.pin_model.names[jid]
            joint = self.pin_model.joints[jid]
            pin_names.add(name)
            native_mimic = 'Mimic' in joint.shortname()
            if name in ours.mimic:
                if native_mimic:
                    continue
                master, mult, off = ours.mimic[name]
            elif name in self.index_v and not native_mimic:
                master, mult, off = name, 1.0, 0.0
            else:
                raise AssertionError('Pinocchio joint %r (%s) has no counterpart in our model'
                                     % (name, joint.shortname()))
            self.joints.append((joint, name, master, mult, off))
        ours_names = set(ours.joint_names) | set(ours.mimic)
        assert pin_names == ours_names, (sorted(pin_names - ours_names),
                                         sorted(ours_names - pin_names))

    def pin_state(self, q, qd, qdd):
        """Our ``(q, qd, qdd)`` ``(nq,), (nv,), (nv,)`` in Pinocchio's coordinates."""
        pm = self.pin_model
        pq = np.zeros(pm.nq)
        pv = np.zeros(pm.nv)
        pa = np.zeros(pm.nv)
        for joint, name, master, mult, off in self.joints:
            iq, iv = joint.idx_q, joint.idx_v
            qm = np.asarray(q[self.index_q[master]], dtype=float)
            if name != master:
                qm = mult * qm + off
            if joint.nq == 2 and joint.nv == 1:  # continuous: (cos, sin)
                pq[iq:iq + 2] = np.cos(qm[0]), np.sin(qm[0])
            else:
                assert joint.nq == len(qm), (name, joint.shortname(), len(qm))
                pq[iq:iq + joint.nq] = qm
            pv[iv:iv + joint.nv] = mult * qd[self.index_v[master]]
            pa[iv:iv + joint.nv] = mult * qdd[self.index_v[master]]
        return pq, pv, pa

    def fold(self, pin_tau):
        """Pinocchio's generalized forces ``(pin nv,)`` as ours ``(nv,)``."""
        tau = np.zeros(self.model.nv)
        for joint, _, master, mult, _ in self.joints:
            tau[self.index_v[master]] += mult * pin_tau[joint.idx_v:joint.idx_v + joint.nv]
        return tau

    def velocity_map(self):
        """
        Return ``(pin nv, nv)`` ``G`` with Pinocchio's velocities ``= G @ ours``.

        Its transpose folds Pinocchio's generalized forces (:meth:`fold`); ``G^T A G`` folds a
        matrix such as Pinocchio's mass matrix, ``J G`` a Jacobian.
        """
        G = np.zeros((self.pin_model.nv, self.model.nv))
        for joint, _, master, mult, _ in self.joints:
            start = self.index_v[master].start
            for k in range(joint.nv):
                G[joint.idx_v + k, start + k] = mult
        return G

    def pin_forces(self, f_ext):
        """
        Convert our wrenches to Pinocchio's per-joint forces.

        Our ``{link: [fx fy fz tx ty tz]}`` (link frame, about its origin) as Pinocchio's
        per-joint forces in the joint frames (``frame.placement`` is joint -> link).
        """
        pin = self.pin
        pm = self.pin_model
        forces = pin.StdVec_Force()
        for _ in range(pm.njoints):
            forces.append(pin.Force.Zero())
        for link, wrench in f_ext.items():
            if link in self.extra_links:
                continue  # immobile in ours (no torque), absent from Pinocchio
            assert pm.existFrame(link, pin.BODY), 'no Pinocchio body frame %r' % link
            frame = pm.frames[pm.getFrameId(link, pin.BODY)]
            assert frame.name == link and frame.type == pin.BODY, (frame.name, frame.type)
            wrench = np.asarray(wrench, dtype=float)
            force = frame.placement.act(pin.Force(wrench[:3], wrench[3:]))
            forces[frame.parentJoint] = forces[frame.parentJoint] + force
        return forces

    def rnea(self, q, qd, qdd, f_ext=None):
        """Pinocchio's inverse dynamics at our state, as our ``(nv,)`` torques."""
        pq, pv, pa = self.pin_state(q, qd, qdd)
        if f_ext:
            tau = self.pin.rnea(self.pin_model, self.pin_data, pq, pv, pa, self.pin_forces(f_ext))
        else:
            tau = self.pin.rnea(self.pin_model, self.pin_data, pq, pv, pa)
        return self.fold(tau)

    def gravity(self, q):
        """Pinocchio's ``computeGeneralizedGravity`` at our ``q``, as our ``(nv,)`` torques."""
        zero = np.zeros(self.model.nv)
        pq, _, _ = self.pin_state(q, zero, zero)
        return self.fold(self.pin.computeGeneralizedGravity(self.pin_model, self.pin_data, pq))

    def random_q(self, rng):
        """Return a ``(nq,)`` position: coordinates within ±pi, unit quaternions if floating."""
        q = rng.uniform(-np.pi, np.pi, self.model.nq)
        for name, jtype in zip(self.model.joint_names, self.model.joint_types):
            if jtype == 'floating':
                s = self.index_q[name]
                quat = rng.normal(size=4)
                q[s.start + 3:s.stop] = quat / np.linalg.norm(quat)
        return q
