"""
Launch test of the installed launch file.

Launch test: the installed launch file starts a node that answers joint states, from the
installed demo arm and from a xacro file with an argument (description_file, xacro_args).

Runs under ``colcon test`` on a ROS 2 install (launch_testing's pytest plugin). Where
launch_testing is not installed (a virtual environment with ROS 2 from the Python registry) the
module is skipped; test_node.py covers the same behaviour by starting the node as the launch
file does.
"""

import os
import time
import unittest

import numpy as np
import pytest

launch_testing = pytest.importorskip('launch_testing')
pytest.importorskip('launch_ros')
# Imported once the skip has passed: launch and ament_index_python come with launch_testing.
launch = pytest.importorskip('launch')
pytest.importorskip('launch_testing.actions')
get_package_share_directory = pytest.importorskip(
    'ament_index_python.packages').get_package_share_directory
PythonLaunchDescriptionSource = pytest.importorskip(
    'launch.launch_description_sources').PythonLaunchDescriptionSource

import rbd_dynamics as rbd  # noqa: E402
import rclpy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

NAMESPACE = 'launch_test'


HERE = os.path.dirname(os.path.abspath(__file__))
# (description_file, xacro_args): the installed demo arm, and a xacro file with an argument
DESCRIPTIONS = [
    (os.path.join(get_package_share_directory('rbd_dynamics'), 'urdf', 'demo_arm.urdf'), ''),
    (os.path.join(os.path.dirname(HERE), 'descriptions', 'two_link.urdf.xacro'),
     'link_mass:=2.0'),
]


@pytest.mark.launch_test
@launch_testing.parametrize('description_file, xacro_args', DESCRIPTIONS)
def generate_test_description(description_file, xacro_args):
    share = get_package_share_directory('rbd_dynamics')
    include = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'rbd_dynamics.launch.py')),
        launch_arguments={'namespace': NAMESPACE, 'description_file': description_file,
                          'xacro_args': xacro_args,
                          'commands_topic': '/effort_controller/commands'}.items())
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()])


class TestAnswersJointStates(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('rbd_launch_test_peer')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_gravity_compensation_matches_library(self, description_file, xacro_args):
        xacro = dict(arg.split(':=', 1) for arg in xacro_args.split())
        model = rbd.Model.from_urdf_file(description_file, xacro_args=xacro or None)
        received, commands = [], []
        self.node.create_subscription(
            JointState, '/%s/rbd_dynamics/gravity_compensation' % NAMESPACE, received.append, 10)
        self.node.create_subscription(
            Float64MultiArray, '/effort_controller/commands', commands.append, 10)
        pub = self.node.create_publisher(JointState, '/%s/joint_states' % NAMESPACE, 10)
        q = np.linspace(-0.5, 0.5, model.nq)
        msg = JointState(name=list(model.joint_names), position=q.tolist())
        end = time.monotonic() + 120.0
        while not (received and commands) and time.monotonic() < end:
            msg.header.stamp = self.node.get_clock().now().to_msg()
            pub.publish(msg)
            rclpy.spin_once(self.node, timeout_sec=0.1)
        self.assertTrue(received, 'no gravity compensation from the launched node')
        self.assertTrue(commands, 'nothing on the remapped ~/effort_commands')
        np.testing.assert_allclose(received[-1].effort, rbd.gravity_torques(model, q),
                                   rtol=0, atol=1e-9)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):

    def test_exit_code(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
