"""Test session setup: every session gets its own DDS domain, restricted to this host.

The variables are set before any test imports rclpy, and the node processes the tests start
inherit them, so parallel test sessions on one machine never see each other's topics.

Fixtures shared by the node tests: ``urdf`` and ``model``, the bundled demo arm (a module may
define its own ``model``).
"""

import os

import pytest

os.environ['ROS_DOMAIN_ID'] = str(1 + os.getpid() % 100)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')


def pytest_configure(config):
    config.addinivalue_line('markers', 'params(dict): parameters of the node a fixture starts')


@pytest.fixture(scope='session')
def urdf():
    """The bundled demo arm's URDF text."""
    from rbd_dynamics.resources import demo_urdf_path
    with open(demo_urdf_path()) as stream:
        return stream.read()


@pytest.fixture(scope='session')
def model(urdf):
    """The library's model of the demo arm."""
    import rbd_dynamics as rbd
    return rbd.Model.from_urdf(urdf)
