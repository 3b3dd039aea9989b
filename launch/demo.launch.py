"""
The demo on a ROS install: MuJoCo arm, trajectory publisher and the rbd_dynamics node.

    ros2 launch rbd_dynamics demo.launch.py

The same three processes as ``python -m rbd_dynamics.ros.demo`` (which also records and plots):
the simulated driver in lockstep at 1 kHz with a wrist F/T sensor, 0.5 Hz swings of every arm
joint, and the node as a computed-torque controller on the simulated clock, with the constants
and parameters of :mod:`rbd_dynamics.ros.demo_setup`. Needs the Python package ``mujoco``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch_ros.actions import Node
from rbd_dynamics.ros.demo_setup import node_parameters, sim_parameters, swing_parameters


def generate_launch_description():
    share = get_package_share_directory('rbd_dynamics')
    with open(os.path.join(share, 'urdf', 'demo_arm.urdf')) as stream:
        urdf = stream.read()
    return LaunchDescription([
        Node(package='rbd_dynamics', executable='rbd_dynamics_sim', name='rbd_dynamics_sim',
             parameters=[sim_parameters()], output='screen'),
        Node(package='rbd_dynamics', executable='rbd_dynamics_trajectory',
             name='rbd_dynamics_trajectory', parameters=[swing_parameters()],
             remappings=[('desired_state', '/rbd_dynamics/desired_state')],
             output='screen'),
        Node(package='rbd_dynamics', executable='rbd_dynamics_node', name='rbd_dynamics',
             parameters=[node_parameters(urdf)],
             remappings=[('~/effort_commands', '/effort_commands'),
                         ('joint_states', '/joint_states_forwarded')],
             output='screen'),
    ])
