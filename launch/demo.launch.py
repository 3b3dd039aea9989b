"""
The demo on a ROS install: MuJoCo arm, trajectory publisher and the rbd_dynamics node.

    ros2 launch rbd_dynamics demo.launch.py

The same three processes as ``python -m rbd_dynamics.ros.demo`` (which also records and plots):
the simulated driver in lockstep at 1 kHz with a wrist F/T sensor, 0.5 Hz swings of every arm
joint, and the node as a computed-torque controller on the simulated clock. Needs the Python
package ``mujoco``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch_ros.actions import Node

Q0 = [0.3, 0.6, -0.2, -1.2, 0.1, 0.8, 0.0, 0.02]
AMPLITUDE = [0.3, 0.2, 0.3, 0.25, 0.3, 0.3, 0.4, 0.0]
JOINTS = ['joint%d' % i for i in range(1, 8)] + ['left_finger_joint']


def generate_launch_description():
    share = get_package_share_directory('rbd_dynamics')
    with open(os.path.join(share, 'urdf', 'demo_arm.urdf')) as stream:
        urdf = stream.read()
    return LaunchDescription([
        Node(package='rbd_dynamics', executable='rbd_dynamics_sim', name='rbd_dynamics_sim',
             parameters=[{'lockstep': True, 'rate': 1000.0, 'initial_positions': Q0,
                          'joints': JOINTS}],
             output='screen'),
        Node(package='rbd_dynamics', executable='rbd_dynamics_trajectory',
             name='rbd_dynamics_trajectory',
             parameters=[{'joints': JOINTS, 'center': Q0, 'amplitude': AMPLITUDE,
                          'frequency': 0.5, 'forward_joint_states': True,
                          'use_sim_time': True}],
             remappings=[('desired_state', '/rbd_dynamics/desired_state')],
             output='screen'),
        Node(package='rbd_dynamics', executable='rbd_dynamics_node', name='rbd_dynamics',
             parameters=[{'robot_description': urdf, 'use_sim_time': True, 'joints': JOINTS,
                          'kp': [400.0] * 8, 'kd': [40.0] * 8, 'desired_timeout': 0.05,
                          'wrench_sensors': ['wrist'], 'wrench.wrist.topic': 'ft_sensor/wrench',
                          'wrench.wrist.compensate_payload': True,
                          'wrench.wrist.timeout': 0.01}],
             remappings=[('~/effort_commands', '/effort_commands'),
                         ('joint_states', '/joint_states_forwarded')],
             output='screen'),
    ])
