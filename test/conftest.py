"""
Test session setup: every test process gets its own DDS domain, restricted to this host.

The variables are set before any test imports rclpy, and the node processes the tests start
inherit them, so parallel test sessions on one machine, and the workers of one session under
pytest-xdist (``-n 2``), never see each other's topics.

The marker ``slow`` goes on every test that starts processes (the node, the simulator, a
command line): the tests under ``node/`` and ``loops/`` are marked here, others by their own
decorator. ``pytest -m "not slow" test`` runs the library, the law and the tools in a minute or
two.

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

import pytest
from support.ci import missing_ci_module


def _domain_id():
    """
    Return this process's DDS domain: one per pytest-xdist worker, or per session without it.

    The workers of one session (``gw0``, ``gw1``, ...) take consecutive domains from
    ``RBD_TEST_DOMAIN`` when it is set (scripts/test.sh gives two sessions side by side their
    own), else from their parent's process id, so they never meet; other sessions start
    elsewhere.
    """
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    index = int(worker[2:]) if worker.startswith('gw') and worker[2:].isdigit() else None
    first = os.environ.get('RBD_TEST_DOMAIN', '')
    if first.isdigit():
        return 1 + (int(first) - 1 + (index or 0)) % 100
    if index is not None:
        return 1 + (os.getppid() + index) % 100
    return 1 + os.getpid() % 100


os.environ['ROS_DOMAIN_ID'] = str(_domain_id())
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
# Two ranges on two threads for every large batch of the suite, even on a one-core machine
# (numba reads this when it is first imported).
os.environ.setdefault('NUMBA_NUM_THREADS', '2')


#: Test directories whose every test starts processes (marked ``slow``).
SLOW_DIRECTORIES = ('node', 'loops')


def pytest_configure(config):
    config.addinivalue_line('markers', 'params(dict): parameters of the node a fixture starts')
    config.addinivalue_line('markers', 'slow: starts processes (node, simulator, command line)')


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.parent.name in SLOW_DIRECTORIES:
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture
def sims():
    """Yield a factory of simulated drivers (:class:`support.sim.Sim`), closed after the test."""
    from support.sim import Sim
    made = []

    def make(*args, **kwargs):
        made.append(Sim(*args, **kwargs))
        return made[-1]

    yield make
    for sim in made:
        sim.close()


@pytest.fixture
def loop():
    """Yield a factory of closed loops (:class:`support.sim.Loop`), checked after the test."""
    from support.sim import Loop
    loops = []

    def make(*args, **kwargs):
        created = Loop(*args, **kwargs)
        loops.append(created)
        return created

    yield make
    for created in loops:
        assert created.close() == [0] * len(created.procs), created.logs()


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
