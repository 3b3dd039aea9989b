"""
The simulated arm that is not its description, and an excitation played on it without ROS.

:func:`true_arm` draws the changes (links, drive) the simulated driver takes as parameters;
:func:`play_excitation` runs an excitation on that arm in MuJoCo in this process (a PD law
around the description's feedforward, 1 kHz) and returns what a driver would record.
"""

import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics.sim import mujoco_model
from rbd_dynamics.sim.true_arm import changed_description, random_changes


def true_arm(urdf, seed):
    """
    Return the simulated arm's parameters (``true_arm.*``, ``drive.*``) and its URDF.

    Every link with an inertial beyond the root: mass and inertia times ``1 +- U(0.15,
    0.3)``, centre of mass moved by ``U(0.01, 0.02)`` m in a random direction; per arm joint
    viscous friction ``U(0.5, 2)`` N m s/rad (the bundled arm's description: 0.5) and Coulomb
    friction ``U(0.5, 3)`` N m (the description: none); the finger 4 N s/m and no Coulomb
    friction. The friction is hard (``drive.hard_friction``): Coulomb friction while a joint
    moves, sticking at rest (a finger with it would stick through a whole excitation, which
    moves it by millimetres per second).
    """
    model = rbd.Model.from_urdf(urdf, compiled=False)
    links, scale, shift = random_changes(urdf, seed, skip=[model.root_link])
    rng = np.random.default_rng(seed + 1)
    arm = np.array([t == 'revolute' for t in model.joint_types])
    viscous = np.where(arm, rng.uniform(0.5, 2.0, model.nv), 4.0)
    coulomb = np.where(arm, rng.uniform(0.5, 3.0, model.nv), 0.0)
    params = {'true_arm.links': links, 'true_arm.mass_scale': scale,
              'true_arm.com_shift': shift, 'drive.enabled': True,
              'drive.viscous': viscous.tolist(), 'drive.coulomb': coulomb.tolist(),
              'drive.hard_friction': True}
    return params, changed_description(urdf, links, scale, shift)


def pd_gains(model, q, bandwidth=25.0, stiffness=100.0):
    """
    Return PD gains ``(kp, kd)`` per joint for holding the arm near ``q``.

    Critically damped at ``bandwidth`` [rad/s] on each joint's effective inertia at ``q``
    (``1 / (M^-1)_jj``, the joint moving with the others free, so that no coupled mode is
    stiffer), and at least ``stiffness`` [N m/rad or N/m]: the wrist's links are so light that
    friction would otherwise hold it back by radians.
    """
    q = np.asarray(q, dtype=float)
    inertia = 1.0 / np.diag(np.linalg.inv(rbd.mass_matrix(model, q)))
    kp = np.maximum(bandwidth ** 2 * inertia, stiffness)
    return kp, 2.0 * np.sqrt(kp * inertia)


def play_excitation(excitation, model, true_urdf, params, rate=1000.0, payload=None):
    """
    Play ``excitation`` on the true arm; ``(t, q, qd, effort)`` at ``rate``.

    The applied torque is the description's ``rnea`` + drive along the excitation plus PD
    terms (:func:`pd_gains` at the start); each state is reported with the torque applied
    over the step that led to it, as the simulated driver reports it. ``model`` (the
    description) orders the joints; ``excitation`` needs ``time`` and ``at(t)`` in its order.
    ``payload`` ``(link, mass, com, inertia)``: held by the link throughout (the simulated
    driver's ``payload.*``); the feedforward does not know it.
    """
    import mujoco
    names = list(model.joint_names)
    drive = {n: (params['drive.viscous'][j], params['drive.coulomb'][j], 0.0)
             for j, n in enumerate(names)}
    drive.update({n: (0.0, 0.0, 0.0) for n in model.mimic})
    sim, mimic = mujoco_model.load(true_urdf, drive=drive,
                                   hard_friction=params.get('drive.hard_friction', False),
                                   payload_link=payload[0] if payload else None)
    if payload:
        mujoco_model.set_payload(sim, *payload[1:])
    data = mujoco.MjData(sim)

    def joint(name):
        return mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT, name)

    qpos = np.array([sim.jnt_qposadr[joint(n)] for n in names])
    dofs = np.array([sim.jnt_dofadr[joint(n)] for n in names])
    duration = excitation.time[-1]
    t = np.arange(0.0, duration + 0.5 / rate, 1.0 / rate)
    q_d, qd_d, qdd_d = excitation.at(t)
    feedforward = rbd.rnea(model, q_d, qd_d, qdd_d) + rbd.drive_torques(
        qd_d, qdd_d, model.damping, model.friction)
    kp, kd = pd_gains(model, q_d[0])
    data.qpos[qpos] = q_d[0]
    for name, (master, mult, offset) in mimic.items():
        data.qpos[sim.jnt_qposadr[joint(name)]] = offset + mult * q_d[0][names.index(master)]
    mujoco.mj_forward(sim, data)
    steps = max(1, int(round(1.0 / (rate * sim.opt.timestep))))
    q, qd, effort = (np.empty_like(q_d) for _ in range(3))
    q[0], qd[0], effort[0] = q_d[0], 0.0, feedforward[0]
    for k in range(1, len(t)):
        tau = feedforward[k - 1] + kp * (q_d[k - 1] - data.qpos[qpos]) \
            + kd * (qd_d[k - 1] - data.qvel[dofs])
        data.qfrc_applied[:] = 0.0
        data.qfrc_applied[dofs] = tau
        for _ in range(steps):
            mujoco.mj_step(sim, data)
        q[k], qd[k], effort[k] = data.qpos[qpos], data.qvel[dofs], tau
    return t, q, qd, effort
