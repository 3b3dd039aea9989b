"""
The real-robot layer of the node over real DDS.

The real-robot layer of the node over real DDS: drive, effort limits, payloads, F/T tare and
the model of a running robot. Every expected torque comes from the library with the same inputs.
"""

import re

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from support import TOL  # noqa: E402
from support.ros import ATTEMPT, exchange, in_order, NodeProcess, Peer, ready_node, \
    wait_ready  # noqa: E402

PAYLOAD = {'mass': 1.5, 'com': (0.01, 0.0, 0.06),
           'inertia': (0.004, 0.0, 0.001, 0.005, 0.0, 0.003)}


@pytest.fixture
def node(urdf, model, request):
    """Start the node with the parameters of the test's ``params`` marker, and its peer."""
    marker = request.node.get_closest_marker('params')
    params = {'robot_description': urdf, 'desired_timeout': 30.0}
    params.update(marker.args[0] if marker else {})
    namespace = '/' + request.node.name.replace('[', '_').replace(']', '').replace('-', '_')
    topics = [params[k] for k in params if k.startswith('wrench.') and k.endswith('.topic')]
    with ready_node(params, namespace, model, sensor_topics=topics) as started:
        yield started


def counted(peer, key, at_least=1, timeout=60.0):
    """Until the diagnostics count ``key`` at least ``at_least`` times."""
    return peer.wait_for(lambda: int(peer.diagnostic(key) or 0) >= at_least, timeout)


def shows(peer, key, predicate, timeout=60.0):
    """Until the diagnostics value of ``key`` satisfies ``predicate``."""
    return peer.wait_for(lambda: predicate(peer.diagnostic(key) or ''), timeout)


def answer(peer, model, q, qd, check, timeout=120.0):
    """Send the state until ``check(feedforward, gravity, command)`` holds; the last answer."""
    last = []

    def ok():
        got = exchange(peer, model.joint_names, q, qd, timeout=ATTEMPT)
        if got is None:
            return False
        last[:] = [got]
        return check(np.asarray(got[0].effort), np.asarray(got[1].effort),
                     np.asarray(got[2].data))

    peer.wait_for(ok, timeout)
    return last[0] if last else None


def close(a, b):
    return np.allclose(a, b, rtol=0, atol=TOL)


DRIVE = {'drive.compensate': True, 'drive.viscous': [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0],
         'drive.coulomb': [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3],
         'drive.armature': [0.3, 0.3, 0.2, 0.2, 0.1, 0.05, 0.05, 0.01],
         'drive.coulomb_velocity': 0.05, 'kp': [30.0] * 8, 'kd': [6.0] * 8}


@pytest.mark.params(DRIVE)
def test_drive_compensation(node, model):
    process, peer = node
    rng = np.random.default_rng(1)
    q, qd, q_d, qd_d, qdd_d = rng.uniform(-0.5, 0.5, (5, model.nv))
    peer.desired(model.joint_names, qdd_d, q_d, qd_d)
    qdd = qdd_d + 30.0 * (q_d - q) + 6.0 * (qd_d - qd)
    coefficients = [DRIVE['drive.%s' % k] for k in ('viscous', 'coulomb', 'armature')]
    drive = rbd.drive_torques(qd, qdd, *coefficients, coulomb_velocity=0.05)
    expect = rbd.rnea(model, q, qd, qdd) + drive
    got = answer(peer, model, q, qd, lambda ff, g, c: close(ff, expect))
    assert got is not None and close(got[0].effort, expect), (got, process.log())
    # gravity compensation stays the rigid-body static torque
    np.testing.assert_allclose(got[1].effort, rbd.gravity_torques(model, q), rtol=0, atol=TOL)
    assert shows(peer, 'drive compensation', lambda v: v.startswith('on'))

    # the friction terms at the desired velocity, while it is fresh
    (result,) = peer.set_parameters(**{'drive.velocity': 'desired'})
    assert result.successful, result.reason
    peer.desired(model.joint_names, qdd_d, q_d, qd_d)
    drive = rbd.drive_torques(qd_d, qdd, *coefficients, coulomb_velocity=0.05)
    got = answer(peer, model, q, qd,
                 lambda ff, g, c: close(ff, rbd.rnea(model, q, qd, qdd) + drive))
    assert got is not None and close(got[0].effort, rbd.rnea(model, q, qd, qdd) + drive)

    # switched off at runtime: plain inverse dynamics again
    (result,) = peer.set_parameters(**{'drive.compensate': False})
    assert result.successful
    got = answer(peer, model, q, qd, lambda ff, g, c: close(ff, rbd.rnea(model, q, qd, qdd)))
    assert got is not None and close(got[0].effort, rbd.rnea(model, q, qd, qdd))
    assert shows(peer, 'drive compensation', lambda v: v == 'off')

    # refused: wrong lengths, negative or non-finite values, a non-positive width; the
    # torques do not change
    bad = [{'drive.viscous': [1.0, 2.0]}, {'drive.coulomb': [-1.0] * 8},
           {'drive.armature': [float('nan')] * 8}, {'drive.coulomb_velocity': 0.0},
           {'drive.coulomb_velocity': -0.1}, {'drive.velocity': 'guessed'},
           {'limits.effort': [1.0] * 3}, {'limits.effort_rate': -1.0}]
    for values in bad:
        (result,) = peer.set_parameters(**values)
        assert not result.successful, values
        assert list(values)[0] in result.reason, (values, result.reason)
    got = exchange(peer, model.joint_names, q, qd)
    assert close(got[0].effort, rbd.rnea(model, q, qd, qdd))


WIDTHS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.05, 0.03, 0.005]


@pytest.fixture
def identified_drive(urdf, model, tmp_path):
    """
    Start the node with a ``drive.yaml`` as ``identify`` writes it (widths per joint).

    The file's parameters are under ``/**`` (any node name): the node, started under its own
    name in a namespace, reads them from ``--params-file``.
    """
    from rbd_dynamics.identification.writeback import drive_yaml
    path = tmp_path / 'drive.yaml'
    path.write_text(drive_yaml(model.joint_names, *(DRIVE['drive.%s' % k] for k in
                                                    ('viscous', 'coulomb', 'armature')), WIDTHS))
    params = {'robot_description': urdf, 'desired_timeout': 30.0, 'drive.compensate': True,
              'kp': DRIVE['kp'], 'kd': DRIVE['kd']}
    with ready_node(params, '/identified_drive', model, params_files=[str(path)]) as started:
        yield started


def test_a_friction_width_per_joint(identified_drive, model):
    """``drive.coulomb_velocity``: one width per joint, from identify's file and at runtime."""
    process, peer = identified_drive
    rng = np.random.default_rng(2)
    q, q_d = rng.uniform(-0.5, 0.5, (2, model.nv))
    qd = np.array([0.01, -0.02, 0.03, -0.05, 0.1, -0.01, 0.02, 0.004])  # in the transitions
    peer.desired(model.joint_names, np.zeros(model.nv), q_d, qd)
    qdd = 30.0 * (q_d - q)
    coefficients = [DRIVE['drive.%s' % k] for k in ('viscous', 'coulomb', 'armature')]

    def expect(widths):
        return rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(qd, qdd, *coefficients,
                                                               coulomb_velocity=widths)

    assert not np.allclose(expect(np.array(WIDTHS)), expect(0.05), atol=1e-3)
    got = answer(peer, model, q, qd, lambda ff, g, c: close(ff, expect(np.array(WIDTHS))))
    assert got is not None and close(got[0].effort, expect(np.array(WIDTHS))), process.log()
    # one width for every joint again, then another list, at runtime
    (result,) = peer.set_parameters(**{'drive.coulomb_velocity': 0.05})
    assert result.successful, result.reason
    got = answer(peer, model, q, qd, lambda ff, g, c: close(ff, expect(0.05)))
    assert got is not None and close(got[0].effort, expect(0.05))
    widths = list(reversed(WIDTHS))
    (result,) = peer.set_parameters(**{'drive.coulomb_velocity': widths})
    assert result.successful, result.reason
    got = answer(peer, model, q, qd, lambda ff, g, c: close(ff, expect(np.array(widths))))
    assert got is not None and close(got[0].effort, expect(np.array(widths)))
    # refused: the wrong number of widths, a non-positive one, an empty list, other types
    # (the parameter takes its type from its value, so the node checks it)
    bad = [Parameter('drive.coulomb_velocity', Parameter.Type.DOUBLE_ARRAY, values)
           for values in ([0.05] * 3, [0.05] * 7 + [0.0], [])]
    bad += [Parameter('drive.coulomb_velocity', value=value)
            for value in (['a'] * 8, 'wide', [True] * 8, True)]
    for param in bad:
        (result,) = peer.set_parameters(param)
        assert not result.successful, param.value
        assert 'drive.coulomb_velocity' in result.reason, result.reason
    got = exchange(peer, model.joint_names, q, qd)
    assert close(got[0].effort, expect(np.array(widths)))


def test_the_node_takes_identify_s_description_yaml(urdf, tmp_path):
    """
    ``--params-file description.yaml`` alone: the identified description reaches the node.

    The description's comments hold ``": "``, which ``-p robot_description:=...`` cannot
    carry (rcl parses the value as YAML); the literal block of ``description.yaml`` can. The
    node builds that description (a heavier hand here) and its drive.
    """
    import xml.etree.ElementTree as ET
    from rbd_dynamics.identification.writeback import drive_yaml
    root = ET.fromstring(urdf)
    mass = root.find("link[@name='link7']/inertial/mass")
    mass.set('value', '%.17g' % (2.0 * float(mass.get('value'))))
    text = ('<?xml version="1.0"?>\n<!-- Author: A. Person: identified: yes -->\n'
            + ET.tostring(root, encoding='unicode') + '\n')
    model = rbd.Model.from_urdf(text, compiled=False)
    path = tmp_path / 'description.yaml'
    path.write_text(drive_yaml(model.joint_names, *(DRIVE['drive.%s' % k] for k in
                                                    ('viscous', 'coulomb', 'armature')), WIDTHS,
                               description=text))
    with ready_node({'desired_timeout': 30.0}, '/description_yaml', model,
                    params_files=[str(path)]) as (process, peer):
        q = np.array([0.3, 0.8, -0.2, -1.2, 0.4, 0.6, 0.2, 0.02])
        expect = rbd.gravity_torques(model, q)
        assert not close(expect, rbd.gravity_torques(rbd.Model.from_urdf(urdf), q))
        got = answer(peer, model, q, np.zeros(model.nv), lambda ff, g, c: close(g, expect))
        assert got is not None and close(got[1].effort, expect), process.log()
        (result,) = peer.set_parameters(**{'drive.compensate': True})
        assert result.successful, result.reason
        qd = np.full(model.nv, 0.02)
        expect = rbd.rnea(model, q, qd, np.zeros(model.nv)) + rbd.drive_torques(
            qd, None, *(DRIVE['drive.%s' % k] for k in ('viscous', 'coulomb')),
            coulomb_velocity=np.array(WIDTHS))
        got = answer(peer, model, q, qd, lambda ff, g, c: close(ff, expect))
        assert got is not None and close(got[0].effort, expect), process.log()


LIMITS = {'limits.clamp': True, 'limits.effort': [5.0, 5.0, 0.0, 5.0, 5.0, 5.0, 5.0, 5.0],
          'command_output': 'gravity_compensation'}


@pytest.mark.params(LIMITS)
def test_effort_limits_clamp_the_commands_only(node, model):
    process, peer = node
    q = np.array([0.0, 0.8, 0.0, -1.2, 0.0, 0.6, 0.0, 0.02])
    tau_g = rbd.gravity_torques(model, q)
    assert abs(tau_g[1]) > 5.0 and abs(tau_g[2]) < 5.0 and abs(tau_g[3]) > 5.0
    got = answer(peer, model, q, np.zeros(model.nv), lambda ff, g, c: close(g, tau_g))
    assert got is not None, process.log()
    # the published torques are never clamped; the command is, except joint3 (0: unlimited)
    np.testing.assert_allclose(got[1].effort, tau_g, rtol=0, atol=TOL)
    limits = np.array(LIMITS['limits.effort'])
    limits[limits == 0] = np.inf
    np.testing.assert_allclose(got[2].data, np.clip(tau_g, -limits, limits), rtol=0, atol=TOL)
    assert counted(peer, 'saturated_cycles')
    assert shows(peer, 'saturated joints (last)',
                 lambda v: 'joint2' in v and 'joint4' in v and 'joint3' not in v)
    assert 'over the effort limit' in process.log()

    # without clamping the command exceeds, and is still counted
    (result,) = peer.set_parameters(**{'limits.clamp': False})
    assert result.successful
    before = int(peer.diagnostic('saturated_cycles'))
    got = answer(peer, model, q, np.zeros(model.nv), lambda ff, g, c: close(c, tau_g))
    assert got is not None and close(got[2].data, tau_g)
    assert counted(peer, 'saturated_cycles', before + 1)

    # the URDF's limits when the parameter is empty (joint2: 320 N m, far above)
    results = peer.set_parameters(Parameter('limits.effort', Parameter.Type.DOUBLE_ARRAY, []),
                                  **{'limits.clamp': True})
    assert all(r.successful for r in results), results
    got = answer(peer, model, q, np.zeros(model.nv), lambda ff, g, c: close(c, tau_g))
    assert got is not None and close(got[2].data, tau_g)

    # a rate limit of 1e-6 N m/s holds the command where it was
    (result,) = peer.set_parameters(**{'limits.effort_rate': 1e-6})
    assert result.successful
    first = exchange(peer, model.joint_names, q, np.zeros(model.nv))
    q2 = q + 0.3
    second = exchange(peer, model.joint_names, q2, np.zeros(model.nv))
    np.testing.assert_allclose(second[1].effort, rbd.gravity_torques(model, q2), rtol=0,
                               atol=TOL)
    np.testing.assert_allclose(second[2].data, first[2].data, rtol=0, atol=1e-4)
    assert np.abs(np.subtract(second[1].effort, first[2].data)).max() > 1.0


SENSOR = {'wrench_sensors': ['wrist'], 'wrench.wrist.topic': '/rr/wrench',
          'wrench.wrist.frame': 'ft_frame', 'wrench.wrist.timeout': 30.0,
          'wrench.wrist.compensate_payload': True}


@pytest.mark.params(SENSOR)
def test_payload_topic_and_parameters(node, model, urdf):
    process, peer = node
    held = rbd.Model.from_urdf(urdf)
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-0.5, 0.5, (2, model.nv))
    # a sensor reading of nothing but the modelled gripper: the contact is zero
    reading = -rbd.payload_wrench(model, 'ft_frame', q)
    peer.wrench('/rr/wrench', '', reading)
    assert close(answer(peer, model, q, qd, lambda ff, g, c: close(
        g, rbd.gravity_torques(model, q)))[1].effort, rbd.gravity_torques(model, q))

    # the payload in the hand, on the topic: the model carries it, and the sensor reading
    # that includes it is compensated with it
    peer.payload('ft_frame', **PAYLOAD)
    held.set_payload('ft_frame', **PAYLOAD)
    reading = -rbd.payload_wrench(held, 'ft_frame', q)
    peer.wrench('/rr/wrench', '', reading)
    expect_g = rbd.gravity_torques(held, q)
    assert np.abs(expect_g - rbd.gravity_torques(model, q)).max() > 0.5
    # (no desired input: the feedforward is the inverse dynamics at zero acceleration); the
    # payload and the reading come on two topics, so the answer is awaited until both count
    f_ff = {'ft_frame': reading + rbd.payload_wrench(held, 'ft_frame', q, qd, np.zeros(8))}
    expect_ff = rbd.rnea(held, q, qd, np.zeros(model.nv), f_ff)
    got = answer(peer, model, q, qd,
                 lambda ff, g, c: close(g, expect_g) and close(ff, expect_ff))
    assert got is not None, process.log()
    assert close(got[1].effort, expect_g) and close(got[0].effort, expect_ff)
    assert shows(peer, 'payload ft_frame', lambda v: v.startswith('m 1.5')), \
        peer.diagnostic('payload ft_frame')

    # refused: unknown link, negative or non-finite values, no frame; nothing changes
    for link, values in (('no_link', PAYLOAD), ('ft_frame', dict(PAYLOAD, mass=-1.0)),
                         ('ft_frame', dict(PAYLOAD, mass=float('nan'))),
                         ('ft_frame', dict(PAYLOAD, com=(0.0, float('inf'), 0.0))),
                         ('ft_frame', dict(PAYLOAD, inertia=(-1.0, 0, 0, 1.0, 0, 1.0))),
                         ('', PAYLOAD)):
        peer.payload(link, **values)
    assert counted(peer, 'rejected_payload', 6), process.log()
    assert shows(peer, 'last payload rejection', lambda v: 'frame_id' in v), \
        peer.diagnostic('last payload rejection')
    assert close(exchange(peer, model.joint_names, q, qd)[1].effort, expect_g)

    # m = 0 removes it
    peer.payload('ft_frame', 0.0)
    peer.wrench('/rr/wrench', '', -rbd.payload_wrench(model, 'ft_frame', q))
    got = answer(peer, model, q, qd, lambda ff, g, c: close(g, rbd.gravity_torques(model, q)))
    assert got is not None and close(got[1].effort, rbd.gravity_torques(model, q))

    # the same payload from parameters, on another link, changed at runtime
    results = peer.set_parameters(**{'payload.link': 'link6', 'payload.mass': 2.0,
                                     'payload.com': [0.0, 0.0, 0.1]})
    assert all(r.successful for r in results), results
    other = rbd.Model.from_urdf(urdf)
    other.set_payload('link6', 2.0, (0.0, 0.0, 0.1))
    peer.wrench('/rr/wrench', '', -rbd.payload_wrench(other, 'ft_frame', q))
    expect_g = rbd.gravity_torques(other, q)
    got = answer(peer, model, q, qd, lambda ff, g, c: close(g, expect_g))
    assert got is not None and close(got[1].effort, expect_g), process.log()
    for values, word in (({'payload.link': 'nowhere'}, 'nowhere'),
                         ({'payload.mass': -2.0}, 'payload.mass'),
                         ({'payload.com': [0.0, 0.1]}, 'payload.com'),
                         ({'payload.inertia': [1.0, 0.0, 0.0, -1.0, 0.0, 1.0]},
                          'payload.inertia')):
        (result,) = peer.set_parameters(**values)
        assert not result.successful and word in result.reason, (values, result.reason)
    assert close(exchange(peer, model.joint_names, q, qd)[1].effort, expect_g)
    (result,) = peer.set_parameters(**{'payload.link': ''})
    assert result.successful
    got = answer(peer, model, q, qd,
                 lambda ff, g, c: close(g, rbd.gravity_torques(model, q, {
                     'ft_frame': -rbd.payload_wrench(other, 'ft_frame', q)
                     + rbd.payload_wrench(model, 'ft_frame', q)})))
    assert got is not None


@pytest.mark.params(SENSOR)
def test_tare(node, model):
    process, peer = node
    q = np.array([0.2, 0.7, -0.1, -1.1, 0.3, 0.5, 0.1, 0.02])
    zero = np.zeros(model.nv)
    ok, message = peer.trigger('wrist/tare')
    assert not ok and 'no fresh reading' in message
    assert counted(peer, 'rejected_tare')

    bias = np.array([5.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    reading = -rbd.payload_wrench(model, 'ft_frame', q) + bias
    peer.wrench('/rr/wrench', '', reading)
    tau_g = rbd.gravity_torques(model, q)
    biased = rbd.gravity_torques(model, q, {'ft_frame': bias})
    got = answer(peer, model, q, zero, lambda ff, g, c: close(g, biased))
    assert got is not None, process.log()
    assert np.abs(biased - tau_g).max() > 0.1  # the untared bias shows in the torques
    ok, message = peer.trigger('wrist/tare')
    assert ok, message
    # the bias as measured: 5 N along x, and rounding residues at most elsewhere
    reported = [float(v) for v in message.rsplit('[', 1)[1].rstrip(']').split(',')]
    assert np.allclose(reported, bias, rtol=0, atol=1e-6), message
    got = answer(peer, model, q, zero, lambda ff, g, c: np.allclose(g, tau_g, rtol=0, atol=1e-6))
    assert got is not None and np.allclose(got[1].effort, tau_g, rtol=0, atol=1e-6)
    assert shows(peer, 'wrench wrist bias', lambda v: v.startswith('[5'))

    # a push after the tare is still seen
    push = np.array([0.0, 0.0, 8.0, 0.0, 0.0, 0.0])
    peer.wrench('/rr/wrench', '', reading + push)
    expect = rbd.gravity_torques(model, q, {'ft_frame': push})
    got = answer(peer, model, q, zero, lambda ff, g, c: close(g, expect))
    assert got is not None and close(got[1].effort, expect)

    ok, message = peer.trigger('wrist/clear_tare')
    assert ok and 'cleared' in message
    got = answer(peer, model, q, zero, lambda ff, g, c: close(
        g, rbd.gravity_torques(model, q, {'ft_frame': bias + push})))
    assert got is not None


@pytest.mark.params({'description_updates': 'lock'})
def test_locked_model_refuses_new_descriptions(node, model, urdf):
    process, peer = node
    heavier = urdf.replace('<mass value="0.6"/>', '<mass value="2.6"/>')
    assert heavier != urdf
    (result,) = peer.set_parameters(robot_description=heavier)
    assert not result.successful and 'lock' in result.reason
    (result,) = peer.set_parameters(gravity=[0.0, 0.0, -9.0])
    assert not result.successful and 'lock' in result.reason
    q = np.linspace(0.3, -0.3, model.nq)
    got = exchange(peer, model.joint_names, q, np.zeros(model.nv))
    assert close(got[1].effort, rbd.gravity_torques(model, q))
    assert shows(peer, 'description_updates', lambda v: v == 'lock')


def test_replacing_description_warns_what_changed(model, urdf):
    node = NodeProcess({'joints': list(model.joint_names)}, namespace='/replace')
    peer = Peer('/replace')
    try:
        peer.pub_description.publish(String(data=urdf))
        assert wait_ready(peer, model), node.log()
        lighter = urdf.replace('<mass value="0.6"/>', '<mass value="0.1"/>')
        peer.pub_description.publish(String(data=lighter))
        swapped = rbd.Model.from_urdf(lighter)
        q = np.linspace(0.3, -0.3, model.nq)
        expect = in_order(swapped, model.joint_names, rbd.gravity_torques(swapped, q))
        assert answer(peer, model, q, np.zeros(model.nv),
                      lambda ff, g, c: close(g, expect), 120.0) is not None, node.log()
        assert peer.wait_for(lambda: 'replaces the model in use' in node.log(), 60.0)
        mass = sum(float(m) for m in re.findall(r'<mass value="([^"]+)"', urdf))
        assert 'total mass %.6g kg -> %.6g kg' % (mass, mass - 0.5) in node.log(), node.log()
        # the same description again (a restarted robot_state_publisher) changes nothing
        peer.pub_description.publish(String(data=lighter))
        peer.spin(1.0)
        assert node.log().count('replaces the model in use') == 1
    finally:
        peer.close()
        assert node.stop() == 0, node.log()


def test_lock_refuses_descriptions_on_the_topic(model, urdf):
    node = NodeProcess({'description_updates': 'lock'}, namespace='/locked_topic')
    peer = Peer('/locked_topic')
    try:
        peer.pub_description.publish(String(data=urdf))
        assert wait_ready(peer, model), node.log()
        peer.pub_description.publish(String(data=urdf.replace('<mass value="0.6"/>',
                                                              '<mass value="9.6"/>')))
        assert counted(peer, 'descriptions_rejected'), node.log()
        assert shows(peer, 'last description rejection', lambda v: 'lock' in v)
        q = np.linspace(0.3, -0.3, model.nq)
        got = exchange(peer, model.joint_names, q, np.zeros(model.nv))
        assert close(got[1].effort, rbd.gravity_torques(model, q))
    finally:
        peer.close()
        assert node.stop() == 0, node.log()
