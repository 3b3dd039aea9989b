"""
The torque law on a floating base: a :class:`~.law.Controller`'s torques from its IMU's reading.

:func:`floating_output` is what :meth:`~.law.Controller.compute` does for a setup with a floating
base (:mod:`rbd_dynamics.floating`); :func:`rest_state` the whole model's state at rest, which a
compensating sensor's tare needs.
"""

import numpy as np

from .base import base_motions, reading
from .values import Output
from ..floating import (base_state, floating_inverse_dynamics, floating_torques,
                        floating_torques_from_imu)


def floating_output(controller, setup, q, qd, now_ns, gravity=True):
    """
    Torques of a floating base (:mod:`rbd_dynamics.floating`) for the joints' state.

    The base's motion comes from the fresh IMU (and odometry) reading; without one, or
    where a torque would not be finite, nothing: ``None``, the reason in
    ``controller.base_problem``. The feedforward is the floating-base RNEA at the commanded
    acceleration, the contacts carrying what the sensors leave of the base wrench; the
    gravity compensation the same with the base at rest in the IMU's orientation and the
    joints at rest; ``gravity`` False leaves it out where the command is not it (``None``:
    nobody reads it).
    """
    model = setup.model
    imu, odometry = controller.base.fresh(now_ns, setup.imu_timeout_ns)
    if imu is None:
        last = controller.base.imu
        controller.base_problem = (
            'no IMU reading yet' if last is None else
            'the IMU reading is stale (%.3g s old, base.imu.timeout %.3g s)'
            % ((now_ns - last.arrival_ns) * 1e-9, setup.imu_timeout_ns * 1e-9))
        return None
    desired = controller.fresh_desired(setup, now_ns)
    qdd = controller.commanded_acceleration(setup, q, qd, desired)
    zero = setup.zero
    if imu.link not in model.link_body:
        controller.base_problem = 'the IMU frame %r is not a link of the model' % imu.link
        return None
    contacts = setup.contacts, setup.contact_type, setup.contact_weights
    at_rest = gravity or not setup.feedforward_out
    if controller.sensors:  # their wrenches need the base's motion first
        motion, rest = base_motions(model, q, qd, qdd, imu, odometry, setup.differentiate)
        full = base_state(model, q, qd, qdd, motion)
        still = base_state(model, q, zero, zero, rest)
        f_ff, f_g, _, _ = controller.wrenches(setup, *full, now_ns, rest=still[1:])
        if at_rest:
            result, tau_g = floating_torques(model, q, qd, qdd, motion, rest, f_ff, f_g,
                                             *contacts)
        else:
            result = floating_inverse_dynamics(model, q, qd, qdd, motion, f_ff, *contacts)
            tau_g = None
    else:
        _, result, tau_g = floating_torques_from_imu(
            model, q, qd, qdd, *reading(imu, odometry, setup.differentiate), *contacts,
            at_rest=at_rest)
    if tau_g is not None:
        tau_g = setup.to_outputs(tau_g)
    tau_ff = result.torques
    if setup.drive_on:
        tau_ff = tau_ff + controller.drive(setup, qd, qdd, desired)
    tau_ff = setup.to_outputs(tau_ff)
    if not (np.isfinite(tau_ff).all() and (tau_g is None or np.isfinite(tau_g).all())
            and np.isfinite(result.unbalanced).all()):
        controller.base_problem = 'a torque would not be finite'
        return None
    controller.base_problem = ''
    command, saturated = controller.limit(
        setup, tau_ff if setup.feedforward_out else tau_g, now_ns)
    return Output(tau_ff, tau_g, command, saturated, floating=result)


def rest_state(controller, setup, q, now_ns):
    """Return the whole floating model's state at rest in the IMU's orientation."""
    imu, odometry = controller.base.fresh(now_ns, setup.imu_timeout_ns)
    if imu is None:
        raise ValueError("no fresh IMU reading: the expected reading of a floating base's "
                         'bodies needs the direction of gravity')
    zero = setup.zero
    _, rest = base_motions(setup.model, q, zero, zero, imu, odometry, False)
    return base_state(setup.model, q, zero, zero, rest)
