"""Test session setup: every session gets its own DDS domain, restricted to this host.

The variables are set before any test imports rclpy, and the node processes the tests start
inherit them, so parallel test sessions on one machine never see each other's topics.
"""

import os

os.environ['ROS_DOMAIN_ID'] = str(1 + os.getpid() % 100)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
