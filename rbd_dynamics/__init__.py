"""
Rigid-body inverse dynamics from a URDF: Featherstone's recursive Newton-Euler algorithm.

The library needs only NumPy (no ROS)::

    import rbd_dynamics as rbd

    model = rbd.Model.from_urdf_file('robot.urdf')
    tau = rbd.rnea(model, q, qd, qdd, f_ext={'tool0': [0, 0, -5.0, 0, 0, 0]})
    tau_g = rbd.gravity_torques(model, q)
    M = rbd.mass_matrix(model, q)   # and coriolis_matrix, jacobian, regressor

The ROS 2 node lives in :mod:`rbd_dynamics.ros`.
"""

from .drive import drive_torques
from .dynamics import gravity_torques, payload_wrench, rnea
from .eom import coriolis_matrix, jacobian, mass_matrix, regressor
from .floating import base_at_rest, base_motion_from_imu, BaseMotion, \
    floating_inverse_dynamics, FloatingResult
from .frames import link_acceleration, link_pose
from .joints import jcalc, JointModel, SUPPORTED_JOINT_TYPES
from .model import DescriptionWarning, InertiaWarning, Model, Payload, UnknownLinkError
from .parsers.description import Description, UrdfError
from .parsers.urdf import MAX_DESCRIPTION_BYTES, parse_urdf

__version__ = '0.1.0'

__all__ = [
    'BaseMotion', 'Description', 'DescriptionWarning', 'FloatingResult', 'InertiaWarning',
    'JointModel', 'MAX_DESCRIPTION_BYTES', 'Model', 'Payload', 'SUPPORTED_JOINT_TYPES',
    'UnknownLinkError', 'UrdfError', 'base_at_rest', 'base_motion_from_imu', 'coriolis_matrix',
    'drive_torques', 'floating_inverse_dynamics', 'gravity_torques', 'jacobian', 'jcalc',
    'link_acceleration', 'link_pose', 'mass_matrix', 'parse_urdf', 'payload_wrench', 'regressor',
    'rnea',
]
