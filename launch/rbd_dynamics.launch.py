"""
Start the rbd_dynamics node.

Parameters
----------
namespace
    namespace of the node and of its relative topics (joint_states,
    robot_description), e.g. the robot's namespace.
use_sim_time
    take time from /clock (Gazebo, the MuJoCo driver).
params_file
    parameters file; default: the package's config/rbd_dynamics.yaml.
description_file
    optional URDF or xacro file for the robot_description parameter; a
    name ending in .xacro is expanded with xacro (``xacro_args``: its name:=value
    arguments, space separated); empty: the node subscribes to the robot_description topic
    (robot_state_publisher latches it).
urdf_file
    the same as description_file (kept for existing launch commands).
commands_topic
    optional topic ~/effort_commands is remapped to, e.g.
    /effort_controller/commands for a ros2_control forward_command_controller.

Example::

    ros2 launch rbd_dynamics rbd_dynamics.launch.py description_file:=/path/robot.urdf.xacro \
        xacro_args:="arm_id:=fr3" use_sim_time:=true commands_topic:=/effort_controller/commands

"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import Command, LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def _node(context):
    description_file = (LaunchConfiguration('description_file').perform(context)
                        or LaunchConfiguration('urdf_file').perform(context))
    use_sim_time = LaunchConfiguration('use_sim_time').perform(context).lower() in ('true', '1')
    overrides = {'use_sim_time': use_sim_time}
    if description_file.endswith('.xacro'):
        # as ROS launch files pass a xacro description: a string, never parsed as YAML
        overrides['robot_description'] = ParameterValue(
            Command(['xacro ', description_file, ' ', LaunchConfiguration('xacro_args')]),
            value_type=str)
    elif description_file:
        with open(description_file) as stream:
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
        DeclareLaunchArgument('description_file', default_value='',
                              description='URDF or xacro file for robot_description; empty: '
                              'use the robot_description topic'),
        DeclareLaunchArgument('xacro_args', default_value='',
                              description='xacro arguments for a .xacro description_file, '
                              'e.g. "arm_id:=fr3 hand:=true"'),
        DeclareLaunchArgument('urdf_file', default_value='',
                              description='the same as description_file'),
        DeclareLaunchArgument('commands_topic', default_value='',
                              description='remap ~/effort_commands to this topic (e.g. '
                              '/effort_controller/commands); empty: no remapping'),
        OpaqueFunction(function=_node),
    ])
