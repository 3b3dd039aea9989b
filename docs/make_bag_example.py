#!/usr/bin/env python3
"""
Make ``docs/bag_example.png``: the bag analysis of a recording of the demo arm.

    python docs/make_bag_example.py

The recording (written with rosbags, MCAP) has two publishers on ``/joint_states``: the arm
at 500 Hz with positions, velocities (with noise) and efforts, and the gripper at 100 Hz with
positions only. The efforts are the model's torques plus viscous friction and noise, as a real
drive would report them.
"""

import os
import shutil
import sys
import tempfile

import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics.cli import bag as cli
from rbd_dynamics.resources import demo_urdf_path
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_typestore, Stores

STORE = get_typestore(Stores.ROS2_JAZZY)
TYPE = 'sensor_msgs/msg/JointState'
T0_NS = 1700000000 * 10 ** 9


def message(t, names, position, velocity=(), effort=()):
    types = STORE.types
    sec, nanosec = divmod(T0_NS + int(round(t * 1e9)), 10 ** 9)
    return types[TYPE](header=types['std_msgs/msg/Header'](
        stamp=types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec), frame_id=''),
        name=list(names), position=np.asarray(position, float),
        velocity=np.asarray(velocity, float), effort=np.asarray(effort, float))


def main():
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    rng = np.random.default_rng(7)
    arm = model.joint_names[:7]
    t = np.arange(0.0, 12.0, 0.002)
    ramp = np.clip(t / 2.0, 0, 1) ** 2 * (3 - 2 * np.clip(t / 2.0, 0, 1))  # start at rest
    freq = np.array([0.25, 0.4, 0.3, 0.5, 0.35, 0.6, 0.45])
    amp = np.array([1.2, 0.7, 1.0, 0.9, 1.2, 1.0, 1.5])
    q = np.zeros((len(t), model.nv))
    q[:, :7] = amp * ramp[:, None] * np.sin(2 * np.pi * freq * t[:, None])
    q[:, 1] += 0.4
    q[:, 3] -= 1.2
    q[:, 7] = 0.02 + 0.015 * np.sin(2 * np.pi * 0.2 * t)
    qd = np.gradient(q, t, axis=0)
    qdd = np.gradient(qd, t, axis=0)
    effort = rbd.rnea(model, q, qd, qdd) + 2.0 * qd + rng.normal(0, 0.4, q.shape)
    work = tempfile.mkdtemp()
    try:
        bag = os.path.join(work, 'bag')
        with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            conn = writer.add_connection('/joint_states', TYPE, typestore=STORE)
            rows = [(x, message(x, arm, q[k, :7], qd[k, :7] + rng.normal(0, 1e-3, 7),
                                effort[k, :7])) for k, x in enumerate(t)]
            rows += [(x, message(x + 0.0007, ['left_finger_joint', 'right_finger_joint'],
                                 [q[k, 7], q[k, 7]])) for k, x in enumerate(t) if k % 5 == 0]
            for x, msg in sorted(rows, key=lambda r: r[0]):
                writer.write(conn, T0_NS + int(x * 1e9) + 10 ** 5,
                             STORE.serialize_cdr(msg, TYPE))
        out = os.path.join(work, 'out')
        code = cli.main(['bag', demo_urdf_path(), bag, '--out', out])
        shutil.copy(os.path.join(out, 'torques.png'),
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), 'bag_example.png'))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == '__main__':
    sys.exit(main())
