"""
Test session setup: every session gets its own DDS domain, restricted to this host.

The variables are set before any test imports rclpy, and the node processes the tests start
inherit them, so parallel test sessions on one machine never see each other's topics.

Fixtures shared by the node tests: ``urdf`` and ``model``, the bundled demo arm (a module may
define its own ``model``).

Where the environment variable ``CI`` is set (CI sets ``CI=true``), a test skipped because a
module that CI installs is missing fails instead: a missing dependency must not turn into a
green run. A skip counts as such when its reason says a module is not installed ("numba is not
installed", pytest.importorskip's "could not import 'mujoco'") and names one of
:data:`CI_INSTALLS`; other skips (launch_testing, which the Python registry does not have)
stay skips.
"""

import os
import re

import pytest

os.environ['ROS_DOMAIN_ID'] = str(1 + os.getpid() % 100)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
# At least two numba threads, even on a one-core machine, so that the parallel batch kernel is
# the one that runs in test_fast_path (numba reads this when it is first imported).
os.environ.setdefault('NUMBA_NUM_THREADS', '2')


def pytest_configure(config):
    config.addinivalue_line('markers', 'params(dict): parameters of the node a fixture starts')


@pytest.fixture(scope='session')
def urdf():
    """Return the bundled demo arm's URDF text."""
    from rbd_dynamics.resources import demo_urdf_path
    with open(demo_urdf_path()) as stream:
        return stream.read()


@pytest.fixture(scope='session')
def model(urdf):
    """Return the library's model of the demo arm."""
    import rbd_dynamics as rbd
    return rbd.Model.from_urdf(urdf)


#: Modules that scripts/setup_env.sh installs, so CI has them (``-`` and ``_`` alike).
CI_INSTALLS = ('pinocchio', 'pin', 'mujoco', 'numba', 'rclpy', 'example_robot_data',
               'hypothesis', 'psutil', 'matplotlib', 'std_msgs', 'sensor_msgs', 'geometry_msgs',
               'trajectory_msgs', 'diagnostic_msgs', 'std_srvs', 'xacro', 'urdf_parser_py',
               'rosbags', 'yaml', 'ament_flake8', 'ament_pep257')
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


def _fail_a_skip_that_ci_must_not_have(report):
    if os.environ.get('CI', '').lower() in ('', '0', 'false') or not report.skipped \
            or hasattr(report, 'wasxfail'):
        return
    longrepr = report.longrepr
    reason = str(longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr)
    module = missing_ci_module(reason)
    if module is not None:
        report.outcome = 'failed'
        report.longrepr = ('skipped for a missing dependency that CI installs (%s): %s'
                           % (module, reason))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_a_skip_that_ci_must_not_have(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield  # a module-level pytest.importorskip skips at collection
    _fail_a_skip_that_ci_must_not_have(outcome.get_result())
