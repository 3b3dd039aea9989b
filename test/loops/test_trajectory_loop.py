"""
Trajectory feedforward in the loop.

Trajectory feedforward in the loop: a planned trajectory through the node's ``~/trajectory``
into a JointTrajectoryController (the simulated driver's stand-in on an effort interface) with
low PID gains, against the same trajectory sent to the controller without efforts.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
rclpy = pytest.importorskip('rclpy')

from support.ros import NodeProcess, spin_until  # noqa: E402
from support.sim import (low_trajectory_gains, positions, stamp, swing,  # noqa: E402
                         trajectory_message)
from trajectory_msgs.msg import JointTrajectory  # noqa: E402


def started(sim):
    """Tell whether the simulated run has begun (a joint state after time zero)."""
    return bool(sim.states) and stamp(sim.states[-1]) > 0.0


def test_filled_efforts_track_ten_times_better(sims, model, urdf):
    gains = low_trajectory_gains(model)
    node = NodeProcess({'robot_description': urdf}, '/jtc_node',
                       extra_args=['-r', '~/trajectory_with_effort:=/jtc_node/joint_trajectory'])
    try:
        runs = {'node': sims('/jtc_node', gains), 'plain': sims('/jtc_plain', gains)}
        planner = runs['node'].node.create_publisher(JointTrajectory,
                                                     '/jtc_node/rbd_dynamics/trajectory', 10)
        # the node listens for plans and its filled trajectories reach the controller
        runs['node'].spin_until(lambda: planner.get_subscription_count() > 0
                                and runs['node'].pub_trajectory.get_subscription_count() > 0
                                and runs['node'].node.count_publishers(
                                    '/jtc_node/joint_trajectory') > 0)
        runs['plain'].spin_until(lambda: runs['plain'].pub_trajectory.get_subscription_count())
        # a plan that arrives before the node has its model is refused ("no model yet")
        runs['node'].spin_until(lambda: "model 'demo_arm' from" in node.log())
        plan = trajectory_message(model, with_effort=False)
        assert not any(len(p.effort) for p in plan.points)
        # one run at a time, each read while it runs: a run left unread while the other one
        # waits for the node would overflow its subscription's history
        rms = {}
        for name, sim in runs.items():
            if name == 'node':
                # The node forwards the plan; whether its publisher has matched the
                # simulator's subscription yet (discovery between two other processes) cannot
                # be seen from here, and a plan forwarded before is lost: the plan goes again
                # every 2 s while the run has not started (the simulator starts on the first).
                for _ in range(60):
                    planner.publish(plan)
                    if spin_until(sim.executor, lambda: started(sim), 2.0, 0.05,
                                  sim.proc.alive):
                        break
            else:
                sim.pub_trajectory.publish(plan)
            # the node's run starts when the node forwards the plan (after any compilation)
            sim.run_until(2.0, timeout=300.0)
            t = np.array([stamp(m) for m in sim.states])
            keep = (t > 0.0) & (t <= 2.0)
            assert keep.sum() > 1500, name
            error = np.array([positions(m) for m in sim.states])[keep] - swing(t[keep]).position
            rms[name] = np.sqrt(np.mean(error[:, :7] ** 2, axis=0))
        print('JTC tracking RMS [rad] with the node', np.array2string(rms['node'], precision=6),
              'without', np.array2string(rms['plain'], precision=6))
        assert rms['plain'].max() >= 10 * rms['node'].max(), rms
        assert rms['node'].max() < 1e-3, rms
    finally:
        assert node.stop() == 0, node.log()[-3000:]
