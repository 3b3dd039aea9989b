"""
Synthetic recordings for the identification tests: motions, a "true" robot, bags.

The efforts of a bag are computed from a true description (the given one with every link's
mass, centre of mass and inertia changed) and a drive model, along a sum of sinusoids per
joint, so what the identification should find is known exactly.
"""

import xml.etree.ElementTree as ET

import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics.drive import drive_torques
from rbd_dynamics.sim.true_arm import changed_description

T0_NS = 1700000000 * 10 ** 9
TOPIC = '/joint_states'


class Motion:
    """
    A sum of sinusoids per joint, inside the joints' position limits.

    ``harmonics`` frequencies per joint, drawn between ``f_min`` and ``f_max`` [Hz]; the
    amplitudes keep every joint within ``span`` of its half range around its middle (one
    radian at most; prismatic joints a tenth of their range).
    """

    def __init__(self, model, limits, seed=0, harmonics=4, f_min=0.1, f_max=0.6, span=0.6,
                 joints=None):
        rng = np.random.default_rng(seed)
        nv = model.nv
        self.centre = np.zeros(nv)
        half = np.full(nv, 1.0)
        for j, name in enumerate(model.joint_names):
            lower, upper = limits.get(name, (-np.pi, np.pi))
            if np.isfinite(lower) and np.isfinite(upper):
                self.centre[j] = 0.5 * (lower + upper)
                half[j] = min(0.5 * (upper - lower), 1.0 / span)
        prismatic = np.array([t == 'prismatic' for t in model.joint_types])
        half[prismatic] *= 0.2
        amp = rng.uniform(0.5, 1.0, (nv, harmonics))
        amp *= (span * half / amp.sum(axis=1))[:, None]
        if joints is not None:  # only these joints move
            moving = np.array([n in joints for n in model.joint_names])
            amp[~moving] = 0.0
        self.amp = amp
        self.w = 2 * np.pi * rng.uniform(f_min, f_max, (nv, harmonics))
        self.phase = rng.uniform(0, 2 * np.pi, (nv, harmonics))

    def __call__(self, t):
        """``(q, qd, qdd)`` each ``(len(t), nv)``."""
        arg = self.w[None] * np.asarray(t, dtype=float)[:, None, None] + self.phase[None]
        s, c = np.sin(arg), np.cos(arg)
        q = self.centre + (self.amp * s).sum(axis=2)
        qd = (self.amp * self.w * c).sum(axis=2)
        qdd = -(self.amp * self.w ** 2 * s).sum(axis=2)
        return q, qd, qdd


def joint_limits(urdf_text):
    """``{joint: (lower, upper)}`` of a URDF's revolute and prismatic joints."""
    root = ET.fromstring(urdf_text)
    out = {}
    for joint in root.iter('joint'):
        limit = joint.find('limit')
        if limit is not None and joint.get('type') in ('revolute', 'prismatic'):
            out[joint.get('name')] = (float(limit.get('lower', '-inf')),
                                      float(limit.get('upper', 'inf')))
    return out


def perturbed_description(urdf_text, seed=0, mass=0.3, com=0.02, links=None):
    """
    Return the URDF with every link's inertial changed: the "true" robot of a test.

    Mass times a factor in ``1 +- mass``, the inertia about the centre of mass with it, the
    centre of mass moved by at most ``com`` [m]; ``links`` limits the change to those links.
    """
    rng = np.random.default_rng(seed)
    names, factors, shifts = [], [], []
    for link in ET.fromstring(urdf_text).iter('link'):
        if link.find('inertial') is None or (links is not None and link.get('name') not in links):
            continue
        names.append(link.get('name'))
        factors.append(1.0 + rng.choice([-1.0, 1.0]) * rng.uniform(0.5 * mass, mass))
        step = rng.normal(size=3)
        shifts.append(step / np.linalg.norm(step) * rng.uniform(0.5 * com, com))
    return changed_description(urdf_text, names, factors, np.ravel(shifts))


def efforts(model, q, qd, qdd, viscous=0.0, coulomb=0.0, armature=0.0,
            coulomb_velocity=0.01, offset=0.0):
    """Efforts of ``model`` with a drive: ``rnea + drive + offset``."""
    return (rbd.rnea(model, q, qd, qdd)
            + drive_torques(qd, qdd, viscous, coulomb, armature, coulomb_velocity) + offset)


def write_joint_states(path, names, t, q, qd=None, effort=None, storage='mcap'):
    """
    Write one publisher's joint states (header stamps ``T0_NS + t``) to a rosbag2.

    The messages are patched copies of one serialized template, so long recordings are
    written quickly; ``qd`` / ``effort`` ``None`` leave those arrays empty.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores
    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    msgtype = 'sensor_msgs/msg/JointState'
    k = len(names)
    marker = 1000.0 + np.arange(3 * k, dtype=float)
    arrays = [q, qd, effort]
    template = types[msgtype](
        header=types['std_msgs/msg/Header'](
            stamp=types['builtin_interfaces/msg/Time'](sec=0x5a5a5a5a, nanosec=0x3c3c3c3c),
            frame_id=''),
        name=list(names), position=marker[:k],
        velocity=marker[k:2 * k] if qd is not None else np.zeros(0),
        effort=marker[2 * k:] if effort is not None else np.zeros(0))
    raw = bytes(store.serialize_cdr(template, msgtype))
    offsets = [raw.find(np.float64(marker[i * k]).tobytes()) for i in range(3)]
    sec_at = raw.find(np.uint32(0x5a5a5a5a).tobytes())
    nanosec_at = raw.find(np.uint32(0x3c3c3c3c).tobytes())
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    stamp = T0_NS + np.round(np.asarray(t) * 1e9).astype(np.int64)
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection(TOPIC, msgtype, typestore=store)
        block = 50000
        for first in range(0, len(stamp), block):
            rows = slice(first, min(len(stamp), first + block))
            s = stamp[rows]
            data = np.tile(np.frombuffer(raw, dtype=np.uint8), (len(s), 1))
            data[:, sec_at:sec_at + 4] = (s // 10 ** 9).astype('<u4')[:, None].view(np.uint8)
            data[:, nanosec_at:nanosec_at + 4] = (s % 10 ** 9).astype('<u4')[:, None].view(
                np.uint8)
            for at, values in zip(offsets, arrays):
                if values is not None:
                    data[:, at:at + 8 * k] = np.ascontiguousarray(
                        values[rows], dtype='<f8').view(np.uint8)
            for row, received in zip(data, s + 150000):
                writer.write(conn, int(received), row.tobytes())
    return str(path)


def read_parameters_file(path):
    """Return the parameters of a node parameters file (``/**``), nested names joined by dots."""
    from rbd_dynamics.analysis.parameters_file import flat_parameters
    return flat_parameters(path)
