"""
The G1 standing in MuJoCo: the node's gravity compensation takes the sag out of PD.

The scene of ``scripts/floating_demo.py`` (:mod:`support.floating_scene`) for 1.5 s: standing
still for 0.5 s, then the arms rising and the torso leaning. With PD alone the arms sag under
gravity; with the law's gravity compensation from the simulated IMU's readings (feet as
contacts, or the feet's force/torque sensors) the arms' error is a small fraction of it, the
torso leans as asked, the robot stands and every torque is finite. The feedforward from the
measured base acceleration, on a robot that stands, runs away: the loop docs/floating_base.md
describes.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')

from support import floating_scene as scene  # noqa: E402

SECONDS = 1.5
pytestmark = pytest.mark.skipif(scene.description_path() is None,
                                reason='example-robot-data is not installed')


@pytest.fixture(scope='module')
def g1():
    with open(scene.description_path()) as stream:
        text = stream.read()
    return text, scene.load_model(text)


@pytest.fixture(scope='module')
def figures(g1):
    text, model = g1
    joints = model.joint_names[1:]
    return {label: scene.Figures(scene.run(label, text, model, SECONDS), joints)
            for label in scene.RUNS}


def test_pd_alone_sags(figures):
    pd = figures['pd']
    assert pd.arm_max > np.radians(2.0) and pd.torso_max > np.radians(1.0)
    assert pd.height_min > 0.7  # still standing


@pytest.mark.parametrize('label', ['contacts', 'sensors'])
def test_the_gravity_compensation_takes_the_sag_out(figures, label):
    pd, law = figures['pd'], figures[label]
    assert law.finite and law.torque_max < 50.0
    assert law.arm_rms < 0.1 * pd.arm_rms and law.arm_max < 0.25 * pd.arm_max
    assert law.torso_max < 0.5 * pd.torso_max
    assert law.height_min > 0.7


def test_sensors_come_close_to_contacts(figures):
    contacts, sensors = figures['contacts'], figures['sensors']
    assert contacts.unbalanced_rms < 1e-9  # two surface contacts carry any base wrench
    assert sensors.arm_rms < 4.0 * contacts.arm_rms + np.radians(0.05)
    assert sensors.torso_max < np.radians(1.5)


def test_the_feedforward_from_the_measured_base_acceleration_runs_away(g1):
    text, model = g1
    with pytest.raises(RuntimeError, match='feedforward ran away'):
        scene.run('contacts', text, model, 0.3, output='feedforward')
