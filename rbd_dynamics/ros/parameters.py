"""
The node's parameters as rclpy declares them: the table of :mod:`rbd_dynamics.control.config`.

The table (names, defaults, descriptions, ranges, checks) is kept without ROS, so that the
torque law and the tools read the same defaults; this module gives each parameter its rclpy
type (:func:`parameter_type`) and names what the node uses of the table.
"""

from rbd_dynamics.control.config import check, CONVENTIONS, MODEL, PARAMETERS, PAYLOAD, \
    sensor_parameters, SETUP
from rclpy.parameter import Parameter

__all__ = ['check', 'CONVENTIONS', 'MODEL', 'PARAMETERS', 'parameter_type', 'PAYLOAD',
           'sensor_parameters', 'SETUP']


def parameter_type(spec):
    """Return the ``rclpy.parameter.Parameter.Type`` of a parameter of the table."""
    return getattr(Parameter.Type, spec.ptype)
