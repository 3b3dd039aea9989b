"""Start the rbd_dynamics node.

Arguments:
    namespace: namespace of the node and of its relative topics (joint_states,
        robot_description), e.g. the robot's namespace.
    use_sim_time: take time from /clock (Gazebo, the MuJoCo driver).
    params_file: parameters file; default: the package's config/rbd_dynamics.yaml.
    urdf_file: optional URDF file read into the robot_description parameter; empty: the node
        subscribes to the robot_description topic (robot_state_publisher latches it).
    commands_topic: optional topic ~/effort_commands is remapped to, e.g.
        /effort_controller/commands for a ros2_control forward_command_controller.

Example::

    ros2 launch rbd_dynamics rbd_dynamics.launch.py urdf_file:=/path/robot.urdf \
        use_sim_time:=true commands_topic:=/effort_controller/commands
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _node(context):
    urdf_file = LaunchConfiguration('urdf_file').perform(context)
    use_sim_time = LaunchConfiguration('use_sim_time').perform(context).lower() in ('true', '1')
    overrides = {'use_sim_time': use_sim_time}
    if urdf_file:
        with open(urdf_file) as stream:
            overrides['robot_description'] = stream.read()
    commands_topic = LaunchConfiguration('commands_topic').perform(context)
    remappings = [('~/effort_commands', commands_topic)] if commands_topic else []
    return [Node(
        package='rbd_dynamics',
        executable='rbd_dynamics_node',
        name='rbd_dynamics',
        namespace=LaunchConfiguration('namespace'),
        parameters=[LaunchConfiguration('params_file'), overrides],
        remappings=remappings,
        output='screen',
    )]


def generate_launch_description():
    default_params = os.path.join(get_package_share_directory('rbd_dynamics'), 'config',
                                  'rbd_dynamics.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('namespace', default_value='',
                              description='namespace of the node and its topics'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use /clock (simulation)'),
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='parameters file'),
        DeclareLaunchArgument('urdf_file', default_value='',
                              description='URDF file for robot_description; empty: use the '
                              'robot_description topic'),
        DeclareLaunchArgument('commands_topic', default_value='',
                              description='remap ~/effort_commands to this topic (e.g. '
                              '/effort_controller/commands); empty: no remapping'),
        OpaqueFunction(function=_node),
    ])
