"""Where the package's installed data (URDFs, launch and config files) lives."""

import os
import sys

PACKAGE = 'rbd_dynamics'


def share_directory():
    """
    Return the package's share directory.

    Looks, in order, in the ament index (a ROS install or colcon workspace), in
    ``<sys.prefix>/share/rbd_dynamics`` (``pip install``) and in the source checkout.
    """
    try:
        from ament_index_python.packages import get_package_share_directory
        return get_package_share_directory(PACKAGE)
    except Exception:  # not a ROS environment, or the package is not in its index
        pass
    candidates = (os.path.join(sys.prefix, 'share', PACKAGE),
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for path in candidates:
        if os.path.isdir(os.path.join(path, 'urdf')):
            return path
    raise FileNotFoundError('cannot find the share directory of %s (looked in %s)'
                            % (PACKAGE, ', '.join(candidates)))


def demo_urdf_path():
    """Path of the bundled demo robot, ``urdf/demo_arm.urdf``."""
    return os.path.join(share_directory(), 'urdf', 'demo_arm.urdf')
