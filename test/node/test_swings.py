"""The demo's desired-state publisher takes a new center and amplitude while it runs."""

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
pytest.importorskip('trajectory_msgs.msg')
from rbd_dynamics.ros.demo_setup import swing  # noqa: E402
from rbd_dynamics.ros.swings import TrajectoryPublisher  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

CENTER = [0.1, -0.4]
AMPLITUDE = [0.2, 0.05]


@pytest.fixture
def publisher():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = TrajectoryPublisher(context=context, parameter_overrides=[
        Parameter('joints', value=['a', 'b']), Parameter('center', value=CENTER),
        Parameter('amplitude', value=AMPLITUDE)])
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_center_and_amplitude_change_while_it_runs(publisher):
    for t in (0.0, 0.3, 1.7):
        np.testing.assert_allclose(publisher.desired(t), swing(t, CENTER, AMPLITUDE, 0.5))
    result = publisher.set_parameters_atomically([Parameter('amplitude', value=[0.0, 0.0]),
                                                  Parameter('center', value=[0.5, 0.25])])
    assert result.successful, result.reason
    for t in (0.0, 0.3, 1.7):
        q, qd, qdd = publisher.desired(t)
        assert q == [0.5, 0.25] and qd == [0.0, 0.0] and qdd == [0.0, 0.0]


@pytest.mark.parametrize('param, word', [
    (Parameter('center', value=[1.0]), 'center must be 2 finite numbers'),
    (Parameter('amplitude', value=[1.0, 2.0, 3.0]), 'amplitude must be 2 finite numbers'),
    (Parameter('center', value=[1.0, float('nan')]), 'center must be 2 finite numbers'),
    (Parameter('frequency', value=2.0), 'read-only parameter: frequency'),
    (Parameter('joints', value=['a']), 'read-only parameter: joints'),
])
def test_a_change_it_cannot_take_is_refused(publisher, param, word):
    (result,) = publisher.set_parameters([param])
    assert not result.successful and word in result.reason, result.reason
    np.testing.assert_allclose(publisher.desired(0.3), swing(0.3, CENTER, AMPLITUDE, 0.5))
    assert publisher.get_parameter('frequency').value == 0.5
