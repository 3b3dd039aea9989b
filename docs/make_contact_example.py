#!/usr/bin/env python3
"""
Make ``docs/contact_example.png``: a push on the tool, seen by the momentum observer.

    python docs/make_contact_example.py

The scene of the closed-loop test (``test/loops/test_contact_loop.py``) in one process, without
DDS: the demo arm in MuJoCo with drive friction and armature, the node's torque law
(:class:`rbd_dynamics.control.law.Controller`) tracking the 0.5 Hz swings with the drive
compensated, the observer reading the efforts the simulated drive applied, and a 20 N push on
the tool from t = 3 s to 4.5 s. The plot shows the residual of three joints with their
thresholds, the external torque the push really puts on them (``J^T f``) and the moment the
contact is flagged.
"""

import os

import matplotlib
import mujoco
import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics.control.config import Config
from rbd_dynamics.control.desired import Desired
from rbd_dynamics.control.law import Controller
from rbd_dynamics.control.setup import Setup
from rbd_dynamics.parsers.urdf import parse_urdf
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.ros.demo_setup import JOINTS, Q0, swing
from rbd_dynamics.ros.sim_driver import joint_drives
from rbd_dynamics.sim import mujoco_model

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402,I100

HERE = os.path.dirname(os.path.abspath(__file__))
# as in test/loops/test_contact_loop.py
VISCOUS = [2.0, 2.0, 1.5, 1.5, 0.5, 0.3, 0.1, 2.0]
COULOMB = [1.0, 1.0, 0.5, 0.5, 0.2, 0.1, 0.02, 0.2]
ARMATURE = [0.3, 0.3, 0.2, 0.2, 0.05, 0.03, 0.01, 0.05]
AMPLITUDE = [0.2, 0.15, 0.2, 0.15, 0.2, 0.2, 0.2, 0.0]
GAIN = 10.0
THRESHOLD = [0.6, 2.0, 0.2, 1.0, 0.055, 0.06, 0.0065, 0.0003]
PUSH = np.array([12.0, -16.0, 0.0])
PUSH_START, PUSH_END, END = 3.0, 4.5, 5.5
TOOL = 'tool_center_point'
DT = 0.001
SHOWN = ('joint1', 'joint2', 'joint4')


def main():
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    model = rbd.Model.from_urdf(urdf)
    m, _ = mujoco_model.load(urdf, timestep=DT, damping=True,
                             drive=joint_drives(parse_urdf(urdf), JOINTS, VISCOUS, COULOMB,
                                                ARMATURE))
    d = mujoco.MjData(m)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    qpos = np.array([m.jnt_qposadr[names.index(n)] for n in model.joint_names])
    dofs = np.array([m.jnt_dofadr[names.index(n)] for n in model.joint_names])
    order = [JOINTS.index(n) for n in model.joint_names]  # model order from JOINTS order
    d.qpos[qpos] = np.asarray(Q0)[order]
    for name, (master, mult, off) in model.mimic.items():
        d.qpos[m.jnt_qposadr[names.index(name)]] = off + mult * d.qpos[
            m.jnt_qposadr[names.index(master)]]
    mujoco.mj_forward(m, d)
    tool = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, TOOL)

    config = Config(joints=JOINTS, kp=[400.0] * 8, kd=[40.0] * 8, drive_compensate=True,
                    contact_observer=True, contact_gain=GAIN, contact_wrench_link=TOOL,
                    **{'drive.viscous': VISCOUS, 'drive.coulomb': COULOMB,
                       'drive.armature': ARMATURE, 'contact.threshold': THRESHOLD})
    setup = Setup(model, config)
    controller = Controller()
    applied = np.zeros(model.nv)
    times, residual, truth, flag = [], [], [], None
    mask = np.ones(model.nv, dtype=bool)
    for k in range(int(round(END / DT)) + 1):
        t = k * DT
        q, qd = d.qpos[qpos].copy(), d.qvel[dofs].copy()
        q_d, qd_d, qdd_d = (a[order] for a in swing(t, Q0, AMPLITUDE))
        now = int(round(t * 1e9))
        controller.set_desired(model, Desired(qdd_d, q_d, qd_d, mask), now)
        out = controller.compute(setup, q, qd, now, applied if k else None, now)
        pushed = PUSH_START <= t < PUSH_END
        if out.external is not None:
            times.append(t)
            residual.append(out.external)
            jt = rbd.jacobian(model, q, TOOL)[:3].T
            truth.append(setup.to_outputs(jt @ PUSH) if pushed else np.zeros(model.nv))
            if flag is None and out.step.contact:
                flag = t
        applied = np.zeros(model.nv)
        applied[setup.rows] = out.command
        d.qfrc_applied[:] = 0.0
        d.qfrc_applied[dofs] = applied
        d.xfrc_applied[tool] = 0.0
        if PUSH_START <= t + DT / 2 < PUSH_END:  # the push over the next step
            d.xfrc_applied[tool, :3] = PUSH
            d.xfrc_applied[tool, 3:] = np.cross(d.xpos[tool] - d.xipos[tool], PUSH)
        mujoco.mj_step(m, d)

    times, residual, truth = np.array(times), np.array(residual), np.array(truth)
    fig, axes = plt.subplots(len(SHOWN), 1, figsize=(9, 7), sharex=True)
    for ax, name in zip(axes, SHOWN):
        j = JOINTS.index(name)
        ax.plot(times, residual[:, j], label='residual r (~/external_effort)')
        ax.plot(times, truth[:, j], 'k--', lw=1, label='external torque of the push, J^T f')
        ax.axhline(THRESHOLD[j], color='tab:red', lw=1, label='contact.threshold')
        ax.axhline(-THRESHOLD[j], color='tab:red', lw=1)
        ax.axvspan(PUSH_START, PUSH_END, color='0.9', label='20 N push on the tool')
        if flag is not None:
            ax.axvline(flag, color='tab:green', lw=1,
                       label='contact flagged (%.0f ms after the push)'
                       % (1e3 * (flag - PUSH_START)))
        ax.set_ylabel('%s [N m]' % name)
        ax.grid(alpha=0.3)
    axes[0].legend(loc='upper left', fontsize=8)
    axes[0].set_title('Demo arm tracking the 0.5 Hz swings with drive friction; gain %g 1/s'
                      % GAIN)
    axes[-1].set_xlabel('time [s]')
    fig.tight_layout()
    out_path = os.path.join(HERE, 'contact_example.png')
    fig.savefig(out_path, dpi=90)
    print('wrote %s; flagged at %s s' % (out_path, flag))


if __name__ == '__main__':
    main()
