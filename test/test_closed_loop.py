"""
Closed loop over real topics: MuJoCo robot <-> rbd_dynamics node, each in its own process.

The simulated driver runs in lockstep (one control period per effort command), so the loop is
deterministic however loaded the machine is; the node runs on the simulated clock.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
rclpy = pytest.importorskip('rclpy')

from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
import rclpy.executors  # noqa: E402
from ros_helpers import node_command, NodeProcess  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

RATE = 1000.0
Q0 = [0.3, 0.6, -0.2, -1.2, 0.1, 0.8, 0.0, 0.02]
JOINTS = ['joint%d' % i for i in range(1, 8)] + ['left_finger_joint']
SIM = node_command('rbd_dynamics_sim', 'rbd_dynamics.ros.sim_driver')
TRAJECTORY = node_command('rbd_dynamics_trajectory', 'rbd_dynamics.ros.trajectory')


class Loop:
    """Sim, node (and optionally the trajectory publisher) in namespace ``ns``."""

    def __init__(self, ns, node_params, sim_params=None, trajectory=None):
        # the loop starts once the test's own subscriber (and the node or the trajectory
        # publisher) listen to the simulated joint states
        sim = {'lockstep': True, 'rate': RATE, 'initial_positions': Q0, 'joints': JOINTS,
               'wait_for_subscribers': 2}
        sim.update(sim_params or {})
        with open(demo_urdf_path()) as stream:
            urdf = stream.read()
        params = {'use_sim_time': True, 'joints': JOINTS, 'desired_timeout': 0.05,
                  'robot_description': urdf}
        params.update(node_params)
        remap = ['-r', '~/effort_commands:=%s/effort_commands' % ns]
        if trajectory:
            # the node sees each joint state after the trajectory publisher has answered it
            remap += ['-r', '~/desired_state:=%s/desired_state' % ns,
                      '-r', 'joint_states:=%s/joint_states_forwarded' % ns]
        self.procs = [NodeProcess(sim, ns, command=SIM),
                      NodeProcess(params, ns, extra_args=remap)]
        if trajectory:
            self.procs.append(NodeProcess(dict(trajectory, joints=JOINTS, use_sim_time=True,
                                               forward_joint_states=True),
                                          ns, command=TRAJECTORY))
        if not rclpy.ok():
            rclpy.init()
        self.peer = rclpy.create_node('closed_loop_peer', namespace=ns)
        # one executor for the whole run: it serves every ready subscription in turn
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.peer)
        self.states, self.gravity = [], []
        self.peer.create_subscription(JointState, 'joint_states', self.states.append, 100)
        self.peer.create_subscription(JointState, 'rbd_dynamics/gravity_compensation',
                                      self.gravity.append, 100)

    def run_until(self, sim_time, timeout=120.0):
        """Spin until a joint state at or after ``sim_time``: ``(t, q)`` arrays, model order."""
        import time
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.05)
            if self.states and self.stamp(self.states[-1]) >= sim_time:
                break
            if not all(p.alive() for p in self.procs):
                break
        t = np.array([self.stamp(m) for m in self.states])
        index = [list(self.states[0].name).index(n) for n in JOINTS] if self.states else []
        q = np.array([np.asarray(m.position)[index] for m in self.states])
        return t, q

    @staticmethod
    def stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def logs(self):
        return '\n'.join(p.log()[-2000:] for p in self.procs)

    def close(self):
        self.executor.remove_node(self.peer)
        self.peer.destroy_node()
        codes = [p.stop() for p in self.procs]
        return codes


@pytest.fixture
def loop(request):
    loops = []

    def make(*args, **kwargs):
        created = Loop(*args, **kwargs)
        loops.append(created)
        return created

    yield make
    for created in loops:
        assert created.close() == [0] * len(created.procs), created.logs()


def drift(t, q, start=0.0):
    keep = t >= start
    return np.abs(q[keep] - np.array(Q0)).max(axis=0)


def test_gravity_compensation_holds_the_arm(loop):
    run = loop('/hold', {'command_output': 'gravity_compensation'})
    t, q = run.run_until(5.0)
    assert len(t) and t[-1] >= 5.0, run.logs()
    assert drift(t, q)[:7].max() < 1e-3, drift(t, q)


def test_wrong_gravity_does_not_hold(loop):
    run = loop('/wrong_gravity', {'command_output': 'gravity_compensation',
                                  'gravity': [0.0, 0.0, -9.0]})
    t, q = run.run_until(2.0)
    assert len(t) and t[-1] >= 2.0, run.logs()
    assert drift(t, q)[:7].max() > 1e-3


TRACKING_BOUND = 1e-3  # rad, RMS error of every arm joint
AMPLITUDE = [0.2, 0.15, 0.2, 0.15, 0.2, 0.2, 0.2, 0.0]


def track(loop, ns, node_params):
    """
    Track a swing of the arm and measure the error.

    0.5 Hz swings of every arm joint under computed torque with PD gains (400, 40): the RMS
    tracking error of each arm joint [rad] over 4 s.
    """
    trajectory = {'center': Q0, 'amplitude': AMPLITUDE, 'frequency': 0.5}
    params = {'command_output': 'feedforward', 'kp': [400.0] * 8, 'kd': [40.0] * 8}
    params.update(node_params)
    run = loop(ns, params, trajectory=trajectory)
    t, q = run.run_until(4.0)
    assert len(t) and t[-1] >= 4.0, run.logs()
    w = 2 * np.pi * 0.5
    desired = np.array(Q0) + np.array(AMPLITUDE) * (1 - np.cos(w * t[:, None]))
    error = q - desired
    rms = np.sqrt(np.mean(error[:, :7] ** 2, axis=0))
    print('%s: tracking RMS error [rad]: %s' % (ns, np.array2string(rms, precision=6)))
    # the arm really moved
    assert np.abs(q[:, :7] - np.array(Q0)[:7]).max() > 0.3
    return rms


def test_computed_torque_tracks_a_sinusoid(loop):
    rms = track(loop, '/track', {})
    assert rms.max() < TRACKING_BOUND, rms


def test_a_wrong_model_misses_the_tracking_bound(loop):
    """
    Wrong model misses the tracking bound.

    The negative control of the test above: the same gains and trajectory with the
    feedforward of a wrong model (about half the gravity) miss its bound, so the bound
    measures the model's share of the tracking, not the PD terms alone.
    """
    rms = track(loop, '/track_wrong_model', {'gravity': [0.0, 0.0, -5.0]})
    assert rms.max() > TRACKING_BOUND, rms


PUSH = np.array([3.0, -2.0, -8.0])  # world frame, at the tool centre point [N]


@pytest.mark.parametrize('compensate', [True, False])
def test_push_measured_by_the_wrist_sensor(loop, compensate):
    """
    Push on the tool measured by the wrist sensor.

    A push on the tool, measured by the simulated wrist F/T sensor (which also weighs the
    gripper): with payload compensation the gravity-compensation torques are those of the
    contact wrench alone; without it the gripper is counted twice. PD terms hold the arm.
    """
    import mujoco
    import rbd_dynamics as rbd
    from rbd_dynamics import mujoco_model

    run = loop('/push_%s' % compensate,
               {'command_output': 'feedforward', 'kp': [400.0] * 8, 'kd': [40.0] * 8,
                'wrench_sensors': ['wrist'], 'wrench.wrist.topic': 'ft_sensor/wrench',
                'wrench.wrist.timeout': 0.01, 'wrench.wrist.compensate_payload': compensate},
               {'push_link': 'tool_center_point', 'push_force': PUSH.tolist(),
                'push_start': 0.5, 'push_duration': 5.0},
               trajectory={'center': Q0, 'amplitude': [0.0] * 8, 'frequency': 0.5,
                           })
    gravity = run.gravity
    t, q = run.run_until(2.0)
    assert len(t) and t[-1] >= 2.0, run.logs()
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    model = rbd.Model.from_urdf(urdf)
    sim, _ = mujoco_model.load(urdf)
    data = mujoco.MjData(sim)
    tcp = mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_BODY, 'tool_center_point')
    by_stamp = {round(s, 6): k for k, s in enumerate(t)}
    errors, effects = [], []
    for msg in gravity:
        k = by_stamp.get(round(run.stamp(msg), 6))
        if k is None or t[k] < 1.5:  # after the push has settled
            continue
        for j, name in enumerate(JOINTS):
            data.qpos[sim.jnt_qposadr[mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT,
                                                        name)]] = q[k, j]
        data.qpos[sim.jnt_qposadr[mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT,
                                                    'right_finger_joint')]] = q[k, 7]
        mujoco.mj_kinematics(sim, data)
        push_tcp = data.xmat[tcp].reshape(3, 3).T @ PUSH
        contact = rbd.gravity_torques(model, q[k], {'tool_center_point':
                                                    np.concatenate([push_tcp, np.zeros(3)])})
        errors.append(np.abs(np.asarray(msg.effort) - contact).max())
        effects.append(np.abs(contact - rbd.gravity_torques(model, q[k])).max())
    assert len(errors) > 100, (len(gravity), len(t), [run.stamp(m) for m in gravity[:3]], t[:3])
    assert min(effects) > 0.1  # the push matters
    if compensate:
        assert max(errors) < 1e-2 * min(effects), (max(errors), min(effects))
    else:
        assert min(errors) > 0.1, min(errors)
