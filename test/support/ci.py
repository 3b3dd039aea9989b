"""The CI skip rule: which skips mean a dependency that CI installs is missing."""

import os
import re


#: Modules that scripts/setup_env.sh installs, so CI has them (``-`` and ``_`` alike).
CI_INSTALLS = ('pinocchio', 'pin', 'mujoco', 'numba', 'rclpy', 'example_robot_data',
               'hypothesis', 'psutil', 'matplotlib', 'std_msgs', 'sensor_msgs', 'geometry_msgs',
               'trajectory_msgs', 'diagnostic_msgs', 'std_srvs', 'nav_msgs', 'xacro',
               'urdf_parser_py', 'rosbags', 'yaml', 'scipy', 'cvxpy', 'ament_flake8',
               'ament_pep257')
_MISSING = re.compile(r'not installed|no module named|could not import', re.IGNORECASE)


def missing_ci_module(reason):
    """
    Return the module of :data:`CI_INSTALLS` that a skip reason says is missing, or ``None``.

    A run on purpose without some of them (the library on Humble's versions, without ROS) names
    those in the environment variable ``RBD_ALLOWED_MISSING`` (comma separated).
    """
    if not _MISSING.search(reason):
        return None
    text = reason.replace('-', '_')
    allowed = {name.strip().replace('-', '_')
               for name in os.environ.get('RBD_ALLOWED_MISSING', '').split(',')}
    for name in CI_INSTALLS:
        if name in allowed:
            continue
        if re.search(r'(?<![\w.])%s(?!\w)' % re.escape(name), text):
            return name
    return None
