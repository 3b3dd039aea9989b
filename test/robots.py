"""Real robot descriptions from example-robot-data, and Pinocchio models mapped to ours by name.

example-robot-data (the Python registry package of the same name, 6.0.0) installs its URDFs
under ``<site-packages>/cmeel.prefix/share/example-robot-data/robots``. Pinocchio (``pin``) is
the independent reference; both are test-only dependencies.
"""

import glob
import os
import sys
import warnings

import numpy as np

import rbd_dynamics as rbd

# Relative paths below the robots directory, with what each one brings to the comparison.
CROSS_CHECK = (
    'double_pendulum_description/urdf/double_pendulum.urdf',  # 2 revolute joints
    'double_pendulum_description/urdf/double_pendulum_continuous.urdf',  # continuous joints
    'asr_twodof_description/urdf/TwoDofs.urdf',  # planar 2-DoF arm
    'panda_description/urdf/panda.urdf',  # 7-DoF arm, gripper with a mimic finger
    'ur_description/urdf/ur5_robot.urdf',  # 6-DoF arm, fixed tool frames
    'ur_description/urdf/ur10_robot.urdf',
    'ur_description/urdf/ur3_gripper.urdf',  # arm + gripper links
    'kinova_description/robots/kinova.urdf',  # continuous joints
    'z1_description/urdf/z1.urdf',
    'xarm_description/urdf/xarm7.urdf',
    'so_arm_description/urdf/so101.urdf',  # small arm, off-axis joint frames
    'baxter_description/urdf/baxter.urdf',  # two arms on a torso, mimic grippers
    'allegro_hand_description/urdf/allegro_right_hand.urdf',  # 16-DoF hand, tree
    'finger_edu_description/robots/finger_edu.urdf',
    'solo_description/robots/solo12.urdf',  # quadruped (fixed base here)
    'anymal_c_simple_description/urdf/anymal.urdf',  # quadruped, inconsistent inertias
    'hyq_description/robots/hyq_no_sensors.urdf',
    'go2_description/urdf/go2.urdf',
    'a1_description/urdf/a1.urdf',
    'b1_description/urdf/b1-z1.urdf',  # quadruped with an arm
    'talos_data/robots/talos_reduced.urdf',  # humanoid, 32 joints, mimic-free variant
    'talos_data/robots/talos_full_v2.urdf',  # humanoid with gripper mimic joints
    'romeo_description/urdf/romeo.urdf',  # humanoid with mimic fingers
    'icub_description/robots/icub.urdf',
    'g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf',  # humanoid with hands
    'centauro_description/urdf/centauro.urdf',  # wheeled quadruped with two arms
    'pr2_description/urdf/pr2.urdf',  # prismatic torso, continuous wheels, mimic grippers
    'tiago_description/robots/tiago.urdf',  # mobile manipulator, prismatic torso
    'tiago_description/robots/tiago_dual.urdf',  # 100+ joints
)


def robots_directory():
    """The example-robot-data robots directory, or ``None`` when the package is missing."""
    for prefix in sys.path:
        path = os.path.join(prefix, 'cmeel.prefix', 'share', 'example-robot-data', 'robots')
        if os.path.isdir(path):
            return path
    return None


def all_urdfs():
    """Every URDF example-robot-data ships (absolute paths)."""
    root = robots_directory()
    if root is None:
        return []
    return sorted(glob.glob(os.path.join(root, '**', '*.urdf'), recursive=True))


def load(path, **kwargs):
    """Our model of ``path``, inconsistent-inertia warnings silenced (they are expected)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.InertiaWarning)
        return rbd.Model.from_urdf_file(path, **kwargs)


class PinocchioPair:
    """Our model and Pinocchio's of one URDF, with the maps between their coordinates.

    Pinocchio keeps mimic joints as independent joints (``mimic=False``) and represents
    unbounded revolute joints by (cos, sin); external forces are per joint, in the joint frame.
    """

    def __init__(self, path, pin):
        self.pin = pin
        self.model = load(path)
        self.pin_model = pin.buildModelFromUrdf(path)
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
        self.joints = []  # (pin joint id, name, master, multiplier, offset)
        for jid in range(1, self.pin_model.njoints):
            name = self.pin_model.names[jid]
            if name in ours.mimic:
                master, mult, off = ours.mimic[name]
            elif name in self.index_v:
                master, mult, off = name, 1.0, 0.0
            else:
                raise AssertionError('Pinocchio joint %r is not in our model' % name)
            self.joints.append((jid, name, master, mult, off))

    def pin_state(self, q, qd, qdd):
        """Our independent ``(q, qd, qdd)`` as Pinocchio's full coordinates."""
        pm = self.pin_model
        pq = np.zeros(pm.nq)
        pv = np.zeros(pm.nv)
        pa = np.zeros(pm.nv)
        for jid, name, master, mult, off in self.joints:
            joint = pm.joints[jid]
            iq, iv = joint.idx_q, joint.idx_v
            qm = q[self.index_q[master]]
            if name != master:
                qm = mult * qm + off
            if joint.nq == 2 and joint.nv == 1:  # unbounded revolute: (cos, sin)
                pq[iq:iq + 2] = np.cos(qm[0]), np.sin(qm[0])
            else:
                assert joint.nq == len(qm), (name, joint.nq, len(qm))
                pq[iq:iq + joint.nq] = qm
            pv[iv:iv + joint.nv] = mult * qd[self.index_v[master]]
            pa[iv:iv + joint.nv] = mult * qdd[self.index_v[master]]
        return pq, pv, pa

    def fold(self, pin_tau):
        """Pinocchio's torques in our coordinates: mimic torques added to their masters."""
        tau = np.zeros(self.model.nv)
        for jid, name, master, mult, _ in self.joints:
            joint = self.pin_model.joints[jid]
            tau[self.index_v[master]] += mult * pin_tau[joint.idx_v:joint.idx_v + joint.nv]
        return tau

    def pin_forces(self, f_ext):
        """Our ``{link: [f, tau]}`` as Pinocchio's per-joint forces in the joint frames."""
        pin = self.pin
        forces = pin.StdVec_Force()
        for _ in range(self.pin_model.njoints):
            forces.append(pin.Force.Zero())
        for link, wrench in f_ext.items():
            frame_id = self.pin_model.getFrameId(link, pin.BODY)
            assert frame_id < len(self.pin_model.frames), link
            frame = self.pin_model.frames[frame_id]
            wrench = np.asarray(wrench, dtype=float)
            force = frame.placement.act(pin.Force(wrench[:3], wrench[3:]))
            forces[frame.parentJoint] = forces[frame.parentJoint] + force
        return forces

    def rnea(self, q, qd, qdd, f_ext=None):
        pq, pv, pa = self.pin_state(q, qd, qdd)
        if f_ext:
            tau = self.pin.rnea(self.pin_model, self.pin_data, pq, pv, pa, self.pin_forces(f_ext))
        else:
            tau = self.pin.rnea(self.pin_model, self.pin_data, pq, pv, pa)
        return self.fold(tau)

    def gravity(self, q):
        pq, _, _ = self.pin_state(q, np.zeros(self.model.nv), np.zeros(self.model.nv))
        return self.fold(self.pin.computeGeneralizedGravity(self.pin_model, self.pin_data, pq))

    def random_q(self, rng):
        """Positions within ±pi (and unit quaternions for floating joints)."""
        q = rng.uniform(-np.pi, np.pi, self.model.nq)
        for name, jtype in zip(self.model.joint_names, self.model.joint_types):
            if jtype == 'floating':
                s = self.index_q[name]
                quat = rng.normal(size=4)
                q[s.start + 3:s.stop] = quat / np.linalg.norm(quat)
        return q
