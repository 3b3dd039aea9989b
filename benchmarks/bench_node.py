#!/usr/bin/env python3
"""
Node figures over real DDS, each against a reference measured in the same run.

    python benchmarks/bench_node.py latency [--seconds 3] [--blocks 10]
    python benchmarks/bench_node.py startup [--runs 5]
    python benchmarks/bench_node.py stall [--runs 3]
    python benchmarks/bench_node.py soak [--minutes 10]
    python benchmarks/bench_node.py humanoid [--seconds 3] [--blocks 10]
    python benchmarks/bench_node.py all [--quick]       (latency, humanoid, startup and stall)

latency: joint_states at 1 kHz from this process; the time until ``~/feedforward`` comes back
from the rbd_dynamics node (its own process, the bundled demo arm, a wrist wrench and desired
input at 100 Hz, the wrench compensated for the modelled gripper and tared, with PD gains, drive
compensation, clamped effort limits with a rate limit, a payload and the momentum observer on the
joint states' efforts: see ``node_parameters``) against a bare rclpy relay
(its own process, republishing each joint state) in alternating blocks; and a third process,
the same node with ``command_output: task`` (operational space at the tool centre point, with
a null-space posture, a desired pose at 100 Hz), timed the same way: until its ``~/feedforward``,
the first output of a joint state, published once every output of the state (the task law's
command included) is computed. Reports p50/p90/p99/max,
dropped outputs, and the ticks this process skipped when it was itself stalled (a late tick is
skipped, as a driver's control loop does, not sent in a burst). Beside it, in this process, the
torque law's compute time per joint state (``Controller.compute`` with the same configuration)
without and with the observer, with the task-space law, and the wrench estimate at the tool
that ``~/external_wrench`` adds when someone subscribes to it.

humanoid: the same against a floating-base humanoid (example-robot-data's 29-DoF Unitree G1,
``base.type: floating``), its IMU on the torso published just before each joint state at 1 kHz
(turning and accelerating; the time of an answer counts from the joint state's publishing, as
the relay's), both feet as surface contacts, the relay answering the same joint states; and
the floating-base law's compute time per joint state in this process.

startup: the node running without a description; the time from publishing the description on
the latched topic to the first torque, and until the node reports its compiled path in use
(diagnostics, 1 Hz), with numba's on-disk cache warm and with an empty cache.

stall: joint states at 1 kHz (with the wrist wrench and desired input at 100 Hz); the largest
gap between two ``~/feedforward`` answers over a quiet block and in a block around each event
(a first and a later 600-point ``~/trajectory``, a description swap, a parameter change, a
tare, a payload message), with a warm and with an empty numba cache; the median over the runs.

soak: the latency workload for many minutes; dropped outputs and the node's resident memory
per minute.

Results go to stdout and, as JSON, to ``--out`` (default benchmarks/results/node.json, and
benchmarks/results/soak.json for the soak).
Benchmarks are not tests: nothing here asserts a time.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault('ROS_DOMAIN_ID', str(101 - os.getpid() % 50))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import InertiaStamped, PoseStamped, TwistStamped  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
import numpy as np  # noqa: E402
import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from rbd_dynamics.ros import processes  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


# The reference: a bare relay ----------------------------------------------------------------

def relay_main():
    """Republish every joint state at once (what any node does at the least)."""
    rclpy.init(args=sys.argv)
    node = rclpy.create_node('bench_relay')
    pub = node.create_publisher(JointState, '~/out', 10)

    def relay(msg):
        out = JointState()
        out.header.stamp = msg.header.stamp
        out.name = msg.name
        out.effort = msg.position
        pub.publish(out)

    node.create_subscription(JointState, 'joint_states', relay, 10)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


# Processes ------------------------------------------------------------------------------------

def node_command():
    return processes.command(*processes.NODE)


def start(cmd, namespace, params=None, env=None):
    """Start ``cmd`` as the launch file would, its output discarded."""
    return processes.RosProcess(cmd, params, namespace, stdout=subprocess.DEVNULL, env=env)


def rss_mb(pid):
    with open('/proc/%d/status' % pid) as stream:
        for line in stream:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024.0
    return float('nan')


# The measuring side -------------------------------------------------------------------------

EXTRAS_RATE = 100.0  # Hz, the wrist wrench and the desired inputs (at most one per joint state)


class Driver:
    """Publishes joint states at a fixed rate and records when each answer comes back."""

    def __init__(self, namespace, output, model, extras=False, pose=None, names=None,
                 imu=None):
        self.node = rclpy.create_node('bench_driver', namespace=namespace)
        self.model = model
        self.names = list(model.joint_names if names is None else names)
        self.imu = None
        if imu is not None:  # a floating base's IMU on link ``imu``, before each joint state
            self.pub_imu = self.node.create_publisher(Imu, 'bench/imu', 10)
            self.imu = Imu()
            self.imu.header.frame_id = imu
            self.imu.orientation.w = 1.0
        self.pub = self.node.create_publisher(JointState, 'joint_states', 10)
        self.received = {}
        self.node.create_subscription(JointState, output, self._on_output, 100)
        self.extras = extras
        self.pose = None
        if pose is not None:  # the task law's desired pose, (position, quaternion)
            self.pub_pose = self.node.create_publisher(PoseStamped, 'rbd_dynamics/desired_pose',
                                                       10)
            self.pose = PoseStamped()
            p, o = self.pose.pose.position, self.pose.pose.orientation
            p.x, p.y, p.z = (float(v) for v in pose[0])
            o.x, o.y, o.z, o.w = (float(v) for v in pose[1])
        if extras:
            self.pub_wrench = self.node.create_publisher(WrenchStamped, 'bench/wrench', 10)
            self.pub_desired = self.node.create_publisher(
                JointTrajectory, 'rbd_dynamics/desired_state', 10)
            # built once: the publishing loop only changes numbers
            self.wrench = WrenchStamped()
            self.wrench.header.frame_id = 'ft_frame'
            self.desired = JointTrajectory()
            self.desired.joint_names = list(model.joint_names)
            point = JointTrajectoryPoint()
            point.positions = [0.1] * model.nv
            point.velocities = [0.0] * model.nv
            self.desired.points = [point]
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._spinner = threading.Thread(target=self._spin, daemon=True)
        self._spinner.start()

    def _spin(self):
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def _on_output(self, msg):
        now = time.time_ns()
        key = msg.header.stamp.sec * 1000000000 + msg.header.stamp.nanosec
        self.received.setdefault(key, now)

    def _imu(self, t, stamp):
        msg = self.imu
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1000000000)
        w, a = msg.angular_velocity, msg.linear_acceleration
        w.x, w.y, w.z = 0.2 * math.sin(t), 0.1 * math.cos(2.0 * t), 0.05
        a.x, a.y, a.z = 0.3 * math.sin(3.0 * t), 0.1, 9.81
        self.pub_imu.publish(msg)

    def _extras(self, k):
        wave = math.sin(k / 100.0)
        self.wrench.wrench.force.z = -5.0 + 0.1 * wave
        self.pub_wrench.publish(self.wrench)
        self.desired.points[0].accelerations = [0.5 * wave] * self.model.nv
        self.pub_desired.publish(self.desired)
        if self.pose is not None:
            self.pub_pose.publish(self.pose)

    def run(self, seconds, rate=1000.0, late=0.5):
        """
        Publish for ``seconds``: ``{send time [ns]: receive time [ns] or None}``.

        Like a driver's control loop, a tick that comes too late (this process was stalled)
        is skipped rather than sent in a burst with the next ones; :attr:`skipped` counts them.
        """
        msg = JointState()
        msg.name = self.names
        count = len(self.names)
        period = 1.0 / rate
        every = max(1, int(round(rate / EXTRAS_RATE)))  # ticks between extras
        sent = []
        self.skipped = 0
        start = time.monotonic()
        k = 0
        while True:
            target = start + k * period
            now = time.monotonic()
            if now - start >= seconds:
                break
            if target > now:
                time.sleep(target - now)
            elif now - target > period:
                behind = int((now - target) / period)
                self.skipped += behind
                k += behind
            q = 0.3 * np.sin(k * period + np.arange(count))
            msg.position = q.tolist()
            msg.velocity = (0.3 * np.cos(k * period + np.arange(count))).tolist()
            msg.effort = (5.0 * np.sin(k * period + np.arange(count))).tolist()
            if self.imu is not None:  # read just before the joint state, published first
                self._imu(k * period, time.time_ns())
            # the answer's time counts from here: the IMU's message is the driver's work
            stamp = time.time_ns()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1000000000)
            self.pub.publish(msg)
            sent.append(stamp)
            if self.extras and k % every == 0:
                self._extras(k)
            k += 1
        time.sleep(late)  # late answers
        return {s: self.received.get(s) for s in sent}

    def close(self):
        self._stop.set()
        self._spinner.join()
        self.executor.remove_node(self.node)
        self.node.destroy_node()


def summarize(result, skip=0.5):
    """Latency percentiles [us] and drops, ignoring the first ``skip`` s (discovery)."""
    sends = sorted(result)
    if not sends:
        return {}
    t0 = sends[0] + int(skip * 1e9)
    kept = [s for s in sends if s >= t0]
    latencies = np.array([(result[s] - s) / 1e3 for s in kept if result[s] is not None])
    out = {'sent': len(kept), 'dropped': len(kept) - len(latencies)}
    if len(latencies):
        for p in (50, 90, 99):
            out['p%d_us' % p] = float(np.percentile(latencies, p))
        out['max_us'] = float(latencies.max())
    return out


def node_parameters(urdf):
    """
    Return the node's parameters for a real arm.

    The node as on a real arm: a compensated and tared wrist sensor, desired input, the
    drive, clamped effort limits with a rate limit, a payload in the hand, and the momentum
    observer with thresholds (a latched contact changes nothing here: no reaction).
    """
    return {'robot_description': urdf, 'wrench_sensors': ['wrist'],
            'wrench.wrist.topic': 'bench/wrench', 'wrench.wrist.compensate_payload': True,
            'desired_timeout': 0.5, 'kp': [100.0] * 8, 'kd': [20.0] * 8,
            'drive.compensate': True, 'drive.coulomb': [0.5] * 8, 'drive.armature': [0.1] * 8,
            'limits.clamp': True, 'limits.effort_rate': 10000.0,
            'payload.link': 'ft_frame', 'payload.mass': 1.0, 'payload.com': [0.0, 0.0, 0.05],
            'payload.inertia': [0.001, 0.0, 0.0, 0.001, 0.0, 0.001],
            'contact.observer': True, 'contact.threshold': [5.0] * 8,
            'contact.wrench_link': 'tool_center_point'}


def task_parameters(urdf):
    """Return :func:`node_parameters` with the task-space law on ``~/effort_commands``."""
    return dict(node_parameters(urdf), **{
        'command_output': 'task', 'task.link': TASK_LINK, 'task.mode': 'operational_space',
        'task.nullspace_stiffness': 5.0})


#: The task-space law's link, and the desired pose the benchmark sends it (near the arm's
#: pose at q = 0.3 sin(i): a few centimetres off).
TASK_LINK = 'tool_center_point'


def task_pose(model):
    """Return a desired pose ``(position, quaternion)`` of the task link near its start."""
    from rbd_dynamics.spatial import matrix_to_quaternion
    T = rbd.link_pose(model, 0.3 * np.sin(np.arange(model.nq)), TASK_LINK)
    return T[:3, 3] + [0.02, -0.01, 0.03], matrix_to_quaternion(T[:3, :3])


def law_times(urdf, count=3000):
    """
    Time the torque law per joint state, in this process, as the node configures it.

    ``Controller.compute`` with the configuration of :func:`node_parameters` and a fresh tared
    reading of the wrist sensor, without and with the observer, with the task-space law of
    :func:`task_parameters` (and the observer), and the wrench estimate at
    ``contact.wrench_link``: ``{name: {'p50_us', 'p99_us'}}``.
    """
    from rbd_dynamics.control.config import Config
    from rbd_dynamics.control.law import Controller
    from rbd_dynamics.control.setup import Setup
    from rbd_dynamics.control.observer import wrench_at
    from rbd_dynamics.control.sensors import Bias, Sensor
    params = node_parameters(urdf)
    model = rbd.Model.from_urdf(urdf)
    model.compile()
    model.set_payload(params['payload.link'], params['payload.mass'], params['payload.com'],
                      params['payload.inertia'])
    sensor = Sensor('wrist', timeout=0.0, compensate=True)
    sensor.receive(0, 'ft_frame', np.array([0.0, 0.0, -5.0, 0.0, 0.0, 0.0]))
    sensor.bias = Bias('ft_frame', np.array([0.1, 0.0, 0.2, 0.0, 0.01, 0.0]))
    from rbd_dynamics import compiled
    from rbd_dynamics.control import task
    compiled.prepare(model, task.KERNELS)
    rows = {}
    for name, observer, values in (('law', False, params), ('law with observer', True, params),
                                   ('task law (operational space) with observer', True,
                                    task_parameters(urdf))):
        setup = Setup(model, Config.from_parameters(dict(values, **{'contact.observer':
                                                                    observer})))
        controller = Controller([sensor])
        pose = task_pose(model) if setup.task_out else None
        times = []
        for k in range(count):
            q = 0.3 * np.sin(k * 1e-3 + np.arange(model.nq))
            qd = 0.3 * np.cos(k * 1e-3 + np.arange(model.nv))
            effort = 5.0 * np.sin(k * 1e-3 + np.arange(model.nv))
            if pose is not None:  # fresh for every state, as a stream of poses keeps it
                controller.set_desired_pose(model, *pose, k * 1000000)
            start_ns = time.perf_counter_ns()
            out = controller.compute(setup, q, qd, k * 1000000, effort, k * 1000000)
            times.append(time.perf_counter_ns() - start_ns)
        assert out is not None and (out.external is not None) == observer
        rows[name] = times
    times = []
    for k in range(count // 10):
        q = 0.3 * np.sin(k * 1e-3 + np.arange(model.nq))
        start_ns = time.perf_counter_ns()
        wrench_at(model, q, params['contact.wrench_link'], out.step.residual)
        times.append(time.perf_counter_ns() - start_ns)
    rows['wrench at the tool'] = times
    return {name: {'p50_us': float(np.percentile(t[len(t) // 10:], 50)) / 1e3,
                   'p99_us': float(np.percentile(t[len(t) // 10:], 99)) / 1e3}
            for name, t in rows.items()}


def tare(driver, timeout=10.0):
    """Tare the node's wrist sensor (the benchmark then runs with a bias removed)."""
    client = driver.node.create_client(Trigger, 'rbd_dynamics/wrist/tare')
    assert client.wait_for_service(timeout_sec=timeout), 'no tare service'
    driver.run(0.2, rate=100.0, late=0.0)  # fresh readings and joint states
    future = client.call_async(Trigger.Request())
    end = time.monotonic() + timeout
    while not future.done() and time.monotonic() < end:
        # the readings go on, as a sensor's do: the tare takes the newest one when the node
        # answers (which can be later than a reading's freshness while it builds its kernels)
        driver.run(0.01, rate=100.0, late=0.0)
    assert future.done(), 'no answer from the tare service'
    assert future.result().success, future.result().message
    print('  %s' % future.result().message, flush=True)


def wait_first(driver, timeout=30.0):
    """Publish slowly until the process under test answers once."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        result = driver.run(0.05, rate=100.0)
        if any(v is not None for v in result.values()):
            return True
    return False


def latency(args, report):
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    relay = start([sys.executable, os.path.abspath(__file__), 'relay'], '/bench_relay')
    params = node_parameters(urdf)
    node = start(node_command(), '/bench_node', params)
    task_node = start(node_command(), '/bench_task', task_parameters(urdf))
    relay_driver = Driver('/bench_relay', 'bench_relay/out', model)
    node_driver = Driver('/bench_node', 'rbd_dynamics/feedforward', model, extras=True)
    task_driver = Driver('/bench_task', 'rbd_dynamics/feedforward', model, extras=True,
                         pose=task_pose(model))
    drivers = (('relay', relay_driver), ('node', node_driver), ('task', task_driver))
    try:
        assert wait_first(relay_driver), 'the relay does not answer'
        assert wait_first(node_driver), 'the node does not answer'
        assert wait_first(task_driver), 'the task node does not answer'
        task_ready = threading.Event()  # its kernels are built on first use
        error_sub = task_driver.node.create_subscription(
            TwistStamped, 'rbd_dynamics/task_error', lambda msg: task_ready.set(), 10)
        end = time.monotonic() + 120.0
        while not task_ready.is_set() and time.monotonic() < end:
            task_driver.run(0.05, rate=100.0)
        assert task_ready.is_set(), 'the task node does not run its law'
        # measured like the other rows: this process receives only ~/feedforward (a
        # subscriber to ~/task_error at 1 kHz would load the measuring side, not the node)
        task_driver.node.destroy_subscription(error_sub)
        tare(node_driver)
        tare(task_driver)
        merged = {name: {} for name, _ in drivers}
        skipped = dict.fromkeys(merged, 0)
        for block in range(args.blocks):
            for name, driver in drivers:
                driver.received.clear()
                result = driver.run(args.seconds)
                summary = summarize(result)
                print('  block %d %-5s %s  (ticks skipped by this stalled driver: %d)'
                      % (block, name, fmt(summary), driver.skipped), flush=True)
                merged[name].update(result)
                skipped[name] += driver.skipped
        rows = {name: summarize(result) for name, result in merged.items()}
        for name in rows:
            rows[name]['driver_ticks_skipped'] = skipped[name]
        rows['node']['rss_mb'] = rss_mb(node.pid)
    finally:
        for _, driver in drivers:
            driver.close()
        relay.stop()
        node.stop()
        task_node.stop()
    ratio50 = rows['node']['p50_us'] / rows['relay']['p50_us']
    ratio99 = rows['node']['p99_us'] / rows['relay']['p99_us']
    print('latency at 1 kHz, %d x %g s blocks each, interleaved:' % (args.blocks, args.seconds))
    for name, _ in drivers:
        print('  %-5s %s' % (name, fmt(rows[name])))
    for name in ('node', 'task'):
        p50 = rows[name]['p50_us'] / rows['relay']['p50_us']
        p99 = rows[name]['p99_us'] / rows['relay']['p99_us']
        rows[name]['ratio_p50'], rows[name]['ratio_p99'] = p50, p99
        print('  %s/relay: p50 %.2fx (target <= 1.5x: %s), p99 %.2fx (target <= 2x: %s), '
              'dropped %d, relay %d (target 0: %s)'
              % (name, p50, verdict(p50 <= 1.5), p99, verdict(p99 <= 2.0),
                 rows[name]['dropped'], rows['relay']['dropped'],
                 verdict(rows[name]['dropped'] == 0)))
    law = law_times(urdf)
    print('  torque law per joint state (this process): %s'
          % ', '.join('%s p50 %.1f us p99 %.1f us' % (name, row['p50_us'], row['p99_us'])
                      for name, row in law.items()))
    report['latency'] = dict(rows, ratio_p50=ratio50, ratio_p99=ratio99, law=law)


#: The humanoid: example-robot-data's 29-DoF G1, its IMU on the torso, both feet on the ground.
HUMANOID = 'g1_description/urdf/g1_29dof_rev_1_0.urdf'
HUMANOID_IMU = 'torso_link'
HUMANOID_FEET = ['left_ankle_roll_link', 'right_ankle_roll_link']


def humanoid_urdf():
    """Return the G1's URDF text, or ``None`` without example-robot-data."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'test'))
    from support.robots import robots_directory
    root = robots_directory()
    if root is None:
        return None
    with open(os.path.join(root, HUMANOID)) as stream:
        return stream.read()


def humanoid_parameters(urdf):
    """Return the node's parameters for the floating-base humanoid."""
    return {'robot_description': urdf, 'base.type': 'floating', 'base.imu.topic': 'bench/imu',
            'contacts.links': HUMANOID_FEET}


def humanoid_law_times(urdf, count=3000):
    """Time the floating-base law per joint state in this process: ``{p50_us, p99_us}``."""
    from rbd_dynamics.control.config import Config
    from rbd_dynamics.control.law import Controller
    from rbd_dynamics.control.setup import Setup
    model = rbd.Model.from_urdf(urdf, floating_base=True)
    setup = Setup(model, Config(contacts_links=HUMANOID_FEET))
    controller = Controller()
    times = []
    for k in range(count):
        t = k * 1e-3
        q = 0.3 * np.sin(t + np.arange(setup.nv))
        qd = 0.3 * np.cos(t + np.arange(setup.nv))
        controller.base.receive_imu(model, '', k * 1000000, k * 1000000, HUMANOID_IMU,
                                    [0.0, 0.0, 0.0, 1.0],
                                    [0.2 * math.sin(t), 0.1 * math.cos(2.0 * t), 0.05],
                                    [0.3 * math.sin(3.0 * t), 0.1, 9.81])
        start_ns = time.perf_counter_ns()
        out = controller.compute(setup, q, qd, k * 1000000)
        times.append(time.perf_counter_ns() - start_ns)
    assert out is not None and out.floating is not None
    t = times[len(times) // 10:]
    return {'p50_us': float(np.percentile(t, 50)) / 1e3,
            'p99_us': float(np.percentile(t, 99)) / 1e3}


def humanoid(args, report):
    """Measure the floating-base humanoid against the relay, in alternating blocks."""
    urdf = humanoid_urdf()
    if urdf is None:
        print('humanoid: example-robot-data is not installed; skipped')
        return
    model = rbd.Model.from_urdf(urdf, floating_base=True)
    names = model.joint_names[1:]
    relay = start([sys.executable, os.path.abspath(__file__), 'relay'], '/bench_relay_h')
    node = start(node_command(), '/bench_humanoid', humanoid_parameters(urdf))
    relay_driver = Driver('/bench_relay_h', 'bench_relay/out', model, names=names)
    node_driver = Driver('/bench_humanoid', 'rbd_dynamics/feedforward', model, names=names,
                         imu=HUMANOID_IMU)
    drivers = (('relay', relay_driver), ('humanoid', node_driver))
    try:
        assert wait_first(relay_driver), 'the relay does not answer'
        assert wait_first(node_driver, timeout=120.0), 'the humanoid node does not answer'
        merged = {name: {} for name, _ in drivers}
        for block in range(args.blocks):
            for name, driver in drivers:
                driver.received.clear()
                result = driver.run(args.seconds)
                print('  block %d %-8s %s' % (block, name, fmt(summarize(result))), flush=True)
                merged[name].update(result)
        rows = {name: summarize(result) for name, result in merged.items()}
    finally:
        for _, driver in drivers:
            driver.close()
        relay.stop()
        node.stop()
    p50 = rows['humanoid']['p50_us'] / rows['relay']['p50_us']
    p99 = rows['humanoid']['p99_us'] / rows['relay']['p99_us']
    rows['humanoid']['ratio_p50'], rows['humanoid']['ratio_p99'] = p50, p99
    print('humanoid (29-DoF G1, floating base, IMU on the torso, two feet) at 1 kHz:')
    for name, _ in drivers:
        print('  %-8s %s' % (name, fmt(rows[name])))
    print('  humanoid/relay: p50 %.2fx (target <= 1.5x: %s), p99 %.2fx (target <= 2x: %s), '
          'dropped %d, relay %d (target 0: %s)'
          % (p50, verdict(p50 <= 1.5), p99, verdict(p99 <= 2.0), rows['humanoid']['dropped'],
             rows['relay']['dropped'], verdict(rows['humanoid']['dropped'] == 0)))
    law = humanoid_law_times(urdf)
    print('  floating-base law per joint state (this process): p50 %.1f us p99 %.1f us'
          % (law['p50_us'], law['p99_us']))
    report['humanoid'] = dict(rows, law=law)


def fmt(summary):
    if 'p50_us' not in summary:
        return 'no answers (%s)' % summary
    return ('p50 %7.1f us  p90 %7.1f  p99 %7.1f  max %8.1f  sent %6d  dropped %d'
            % (summary['p50_us'], summary['p90_us'], summary['p99_us'], summary['max_us'],
               summary['sent'], summary['dropped']))


def verdict(ok):
    return 'PASS' if ok else 'FAIL'


def compiled_at(driver, namespace):
    """
    Record when the node's diagnostics first say that the compiled path is in use.

    The time [ns] goes to ``driver.compiled``.
    """
    driver.compiled = None

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.startswith(namespace + '/') and driver.compiled is None and any(
                    v.key == 'compiled path' and v.value == 'in use' for v in status.values):
                driver.compiled = time.time_ns()

    driver.node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)


def startup(args, report):
    """
    Measure description published -> first torque, and -> compiled path in use.

    With a warm and with a cold numba cache.
    """
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    results = {'warm': [], 'cold': []}
    full_speed = {'warm': [], 'cold': []}
    kinds = ('warm',) if args.warm_only else ('warm', 'cold')
    for run in range(args.runs):
        for kind in kinds:
            env = {}
            cache = None
            if kind == 'cold':
                cache = tempfile.mkdtemp(prefix='rbd_numba_cache_')
                env['NUMBA_CACHE_DIR'] = cache
            ns = '/bench_start_%s_%d' % (kind, run)
            proc = start(node_command(), ns, env=env)
            driver = Driver(ns, 'rbd_dynamics/feedforward', model)
            compiled_at(driver, ns)
            pub = driver.node.create_publisher(String, 'robot_description', LATCHED)
            try:
                # the node is up when it subscribes to the description
                end = time.monotonic() + 30.0
                while pub.get_subscription_count() == 0 and time.monotonic() < end:
                    time.sleep(0.01)
                time.sleep(0.2)
                driver.received.clear()
                t0 = time.time_ns()
                pub.publish(String(data=urdf))
                first = None
                while time.time_ns() - t0 < 60e9:
                    driver.run(0.005, rate=1000.0, late=0.0)
                    if driver.received:
                        first = (min(driver.received.values()) - t0) / 1e9
                        break
                while driver.compiled is None and time.time_ns() - t0 < 120e9:
                    driver.run(0.05, rate=1000.0, late=0.0)  # the node keeps computing
                fast = None if driver.compiled is None else (driver.compiled - t0) / 1e9
                results[kind].append(first)
                full_speed[kind].append(fast)
                print('  run %d %s cache: first torque %.3f s after the description, compiled '
                      'path in use after %.2f s (diagnostics, 1 Hz)'
                      % (run, kind, first if first is not None else float('nan'),
                         fast if fast is not None else float('nan')), flush=True)
            finally:
                driver.close()
                proc.stop()
                if cache:
                    shutil.rmtree(cache, ignore_errors=True)
    for kind, target in (('warm', 2.0), ('cold', 10.0))[:len(kinds)]:
        values = [v for v in results[kind] if v is not None]
        median = float(np.median(values)) if values else float('nan')
        print('startup %s cache: median %.3f s, max %.3f s (target <= %g s: %s)'
              % (kind, median, max(values) if values else float('nan'), target,
                 verdict(bool(values) and max(values) <= target)))
        report['startup_%s_s' % kind] = results[kind]
        report['compiled_path_%s_s' % kind] = full_speed[kind]


# Stalls: the largest gap in the torque stream around events -------------------------------

#: Events of the stall mode, in the order they are fired.
STALL_EVENTS = ('first trajectory', 'later trajectory', 'description swap', 'parameter change',
                'tare', 'payload message')
STALL_QUIET_S = 2.0  # s, the quiet block
STALL_WINDOW_S = 1.5  # s, the block around each event (fired 0.3 s into it)


def planned_trajectory(model, points=600, rate=100.0):
    """Return a time-parameterised plan of every joint at ``rate`` Hz: a swing from rest."""
    msg = JointTrajectory()
    msg.joint_names = list(model.joint_names)
    t = np.arange(points) / rate
    w = 2.0 * np.pi / t[-1]
    amplitude = 0.2 * np.ones(model.nv)
    for k, tk in enumerate(t):
        point = JointTrajectoryPoint()
        point.positions = (amplitude * (1.0 - np.cos(w * tk))).tolist()
        point.velocities = (amplitude * w * np.sin(w * tk)).tolist()
        point.accelerations = (amplitude * w * w * np.cos(w * tk)).tolist()
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(
            int(round(tk * 1e9)), 1000000000)
        msg.points.append(point)
    return msg


def largest_gap_ms(received):
    """Return the largest time between two consecutive answers [ms]."""
    times = np.sort(np.array([v for v in received.values() if v is not None], dtype=np.int64))
    return float(np.diff(times).max() / 1e6) if len(times) > 1 else float('nan')


class Events:
    """The stall mode's events, fired through the driver's node from another thread."""

    def __init__(self, driver, model, urdf):
        node = driver.node
        self.driver = driver
        self.plan = planned_trajectory(model)
        self.description = node.create_publisher(String, 'robot_description', LATCHED)
        self.urdf = urdf
        self.trajectory = node.create_publisher(JointTrajectory, 'rbd_dynamics/trajectory', 10)
        self.filled = []
        node.create_subscription(JointTrajectory, 'rbd_dynamics/trajectory_with_effort',
                                 self.filled.append, 10)
        self.payload = node.create_publisher(InertiaStamped, 'rbd_dynamics/payload', 10)
        self.tare = node.create_client(Trigger, 'rbd_dynamics/wrist/tare')
        self.parameters = node.create_client(SetParameters, 'rbd_dynamics/set_parameters')
        self.swaps = 0

    def fire(self, name):
        """Fire one event; return once the node has done it (or a deadline passed)."""
        if name in ('first trajectory', 'later trajectory'):
            count = len(self.filled)
            self.trajectory.publish(self.plan)
            return self._wait(lambda: len(self.filled) > count)
        if name == 'description swap':
            # the same robot under another name: a new model, built and swapped in
            self.swaps += 1
            heavier = self.urdf.replace('<robot name="demo_arm"', '<robot name="demo_arm%d"'
                                        % self.swaps, 1)
            self.description.publish(String(data=heavier))
            return True
        if name == 'parameter change':
            request = SetParameters.Request()
            request.parameters = [Parameter('kp', value=[90.0 + self.swaps] * 8)
                                  .to_parameter_msg()]
            return self._call(self.parameters, request) is not None
        if name == 'tare':  # done only if the node took a reading for it
            response = self._call(self.tare, Trigger.Request())
            return response is not None and response.success
        if name == 'payload message':
            msg = InertiaStamped()
            msg.header.frame_id = 'ft_frame'
            msg.inertia.m = 1.5
            msg.inertia.com.z = 0.05
            msg.inertia.ixx = msg.inertia.iyy = msg.inertia.izz = 0.002
            self.payload.publish(msg)
            return True
        raise ValueError(name)

    def _call(self, client, request):
        """Return the service's response, or ``None`` when none came in time."""
        future = client.call_async(request)
        return future.result() if self._wait(future.done) else None

    @staticmethod
    def _wait(done, timeout=30.0):
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            time.sleep(0.005)
        return done()


def stall(args, report):
    """
    Measure the largest gap between two outputs at 1 kHz, quiet and around each event.

    With a warm and with a cold numba cache (the events start once the compiled path is in
    use); each figure is the median over the runs.
    """
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    params = node_parameters(urdf)
    del params['robot_description']  # from the latched topic, so that it can be swapped
    results = {}
    for kind in ('warm', 'cold'):
        runs = []
        for run in range(args.runs):
            cache = tempfile.mkdtemp(prefix='rbd_numba_cache_') if kind == 'cold' else None
            env = {'NUMBA_CACHE_DIR': cache} if cache else None
            ns = '/bench_stall_%s_%d' % (kind, run)
            node = start(node_command(), ns, params, env=env)
            driver = Driver(ns, 'rbd_dynamics/feedforward', model, extras=True)
            compiled_at(driver, ns)
            events = Events(driver, model, urdf)
            try:
                events.description.publish(String(data=urdf))
                assert wait_first(driver, 120.0), 'the node does not answer'
                end = time.monotonic() + 300.0
                while driver.compiled is None and time.monotonic() < end:
                    driver.run(0.1, rate=100.0, late=0.0)
                assert events.tare.wait_for_service(timeout_sec=30.0)
                assert events.parameters.wait_for_service(timeout_sec=30.0)
                driver.received.clear()
                gaps = {'quiet': largest_gap_ms(driver.run(STALL_QUIET_S, late=0.1))}
                for name in STALL_EVENTS:
                    driver.received.clear()
                    fired = []
                    timer = threading.Timer(0.3, lambda n=name: fired.append(events.fire(n)))
                    timer.start()
                    result = driver.run(STALL_WINDOW_S, late=0.1)
                    timer.join()
                    assert fired and fired[0], '%s: the node did not do it' % name
                    gaps[name] = largest_gap_ms(result)
                runs.append(gaps)
                print('  run %d %s cache: largest gap %s' % (run, kind, ', '.join(
                    '%s %.1f ms' % item for item in gaps.items())), flush=True)
            finally:
                driver.close()
                node.stop()
                if cache:
                    shutil.rmtree(cache, ignore_errors=True)
        medians = {name: float(np.median([r[name] for r in runs]))
                   for name in ('quiet',) + STALL_EVENTS}
        added = {name: medians[name] - medians['quiet'] for name in STALL_EVENTS}
        worst = max(added, key=added.get)
        print('stall %s cache (median of %d runs): quiet %.1f ms; the worst event, %s, adds '
              '%.1f ms (target <= 10 ms: %s)'
              % (kind, len(runs), medians['quiet'], worst, added[worst],
                 verdict(added[worst] <= 10.0)))
        results[kind] = {'runs': runs, 'median_ms': medians, 'added_ms': added}
    report['stall'] = results


def soak(args, report):
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    params = node_parameters(urdf)
    node = start(node_command(), '/bench_soak', params)
    driver = Driver('/bench_soak', 'rbd_dynamics/feedforward', model, extras=True)
    minutes = []
    try:
        assert wait_first(driver), 'the node does not answer'
        tare(driver)
        for minute in range(int(args.minutes)):
            driver.received.clear()
            summary = summarize(driver.run(60.0), skip=0.0)
            summary['driver_ticks_skipped'] = driver.skipped
            summary['rss_mb'] = rss_mb(node.pid)
            summary['alive'] = node.alive()
            minutes.append(summary)
            print('  minute %2d: %s  rss %.1f MB' % (minute + 1, fmt(summary),
                                                     summary['rss_mb']), flush=True)
    finally:
        driver.close()
        exit_code = node.stop()
    rss = [m['rss_mb'] for m in minutes]
    dropped = sum(m['dropped'] for m in minutes)
    growth = rss[-1] - rss[0] if rss else float('nan')
    print('soak %d min at 1 kHz: sent %d, dropped %d, rss %.1f -> %.1f MB (growth %.1f MB '
          'after the first minute), exit code %s'
          % (len(minutes), sum(m['sent'] for m in minutes), dropped,
             rss[0] if rss else float('nan'), rss[-1] if rss else float('nan'), growth,
             exit_code))
    report['soak'] = {'minutes': minutes, 'dropped': dropped, 'rss_growth_mb': growth,
                      'exit_code': exit_code}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('what', choices=('latency', 'humanoid', 'startup', 'stall', 'soak',
                                         'all', 'relay'))
    # many short blocks, alternating: a disturbed stretch of the machine hits both sides
    parser.add_argument('--seconds', type=float, default=3.0, help='latency block length')
    parser.add_argument('--blocks', type=int, default=10)
    parser.add_argument('--runs', type=int, default=3, help='startup and stall runs')
    parser.add_argument('--warm-only', action='store_true',
                        help='startup: only with the warm cache')
    parser.add_argument('--minutes', type=float, default=10.0, help='soak length')
    parser.add_argument('--quick', action='store_true',
                        help='short blocks, one startup run, a 2-minute soak')
    parser.add_argument('--out', default=None, help='JSON results (default: '
                        'benchmarks/results/node.json, soak.json for the soak)')
    args, _ = parser.parse_known_args()  # the relay also gets --ros-args
    if args.what == 'relay':
        return relay_main()
    if args.out is None:
        args.out = os.path.join(HERE, 'results',
                                'soak.json' if args.what == 'soak' else 'node.json')
    if args.quick:
        args.seconds, args.blocks, args.runs = 2.0, 4, 1
        args.minutes = min(args.minutes, 2.0)
    rclpy.init()
    report = {'machine': {'cpus': os.cpu_count(), 'python': sys.version.split()[0]}}
    try:
        if args.what in ('latency', 'all'):
            latency(args, report)
        if args.what in ('humanoid', 'all'):
            humanoid(args, report)
        if args.what in ('startup', 'all'):
            startup(args, report)
        if args.what in ('stall', 'all'):
            stall(args, report)
        if args.what == 'soak':
            soak(args, report)
    finally:
        rclpy.try_shutdown()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w') as stream:
        json.dump(report, stream, indent=2)
    print('results written to %s' % args.out)


if __name__ == '__main__':
    main()
