"""
The node's model source, diagnostics status and failure counter, without a node.

A :class:`ModelSource` is given a recording logger and a plain holder for the model in use, so
the order of its log lines and swaps is seen as it happens; the model's compiled path is
replaced by a stub (the compilation is not what these tests are about).
"""

import threading
import time

import pytest
import rbd_dynamics as rbd
from rbd_dynamics.control.config import Config

pytest.importorskip('rclpy')  # (the parameter table's types)
diagnostics = pytest.importorskip('rbd_dynamics.ros.diagnostics')  # (diagnostic_msgs)
from rbd_dynamics.ros import parameters  # noqa: E402
from rbd_dynamics.ros.executor import count_failure, FailureCounter  # noqa: E402
from rbd_dynamics.ros.model_source import describe_change, ModelSource, ModelStatus, \
    node_model  # noqa: E402
from support.urdf_builders import two_link  # noqa: E402

URDF = two_link(1.0, 2.0, 0.5, 0.25, 0.25, 0.01, 0.02)


class Recorder:
    """A logger and a holder of the model in use that write one shared event list."""

    def __init__(self):
        self.events = []
        self.active = None

    def _log(self, level, msg, **kwargs):
        self.events.append((level, msg))

    def info(self, msg, **kwargs):
        self._log('info', msg)

    def warning(self, msg, **kwargs):
        self._log('warning', msg)

    def error(self, msg, **kwargs):
        self._log('error', msg)

    def put(self, active):
        self.events.append(('put', active.setup.model.name))
        self.active = active


def defaults(**values):
    params = {spec.name: spec.default for spec in parameters.PARAMETERS}
    params.update(values)
    return params


def make_source(**values):
    recorder = Recorder()
    params = defaults(**values)
    source = ModelSource(recorder, threading.Lock(), lambda: recorder.active, recorder.put,
                         params, Config.from_parameters(params))
    return source, recorder


def stub_model(text, params):
    model = node_model(text, params)
    model.compile = lambda: False
    return model


def wait(predicate, timeout=10.0):
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        time.sleep(0.01)
    return predicate()


def test_a_new_model_is_announced_before_it_is_put_in_use():
    source, recorder = make_source()
    source.topic_description = URDF
    source.request('the test', stub_model(URDF, source._params))
    assert wait(lambda: recorder.active is not None and not source.compiling)
    put = recorder.events.index(('put', 'two_link'))
    announced = [i for i, (_, msg) in enumerate(recorder.events)
                 if msg.startswith("model 'two_link' from the test")]
    assert announced and announced[0] < put
    assert source.status() == ('the test', '', '', False)
    source.shutdown()


def test_a_replacing_model_is_compiled_before_it_is_put_in_use():
    """
    A first model is compiled after it is put in use, a replacing one before.

    The first model answers at once on the NumPy path; a model that replaces one in use is
    compiled first, so the torque stream stays on the old model's compiled path meanwhile.
    """
    source, recorder = make_source()

    def recorded(text):
        model = node_model(text, source._params)

        def compile_():
            recorder.events.append(('compile', model.name))
            return False
        model.compile = compile_
        return model

    source.topic_description = URDF
    source.request('the test', recorded(URDF))
    assert wait(lambda: ('compile', 'two_link') in recorder.events)
    other = URDF.replace('two_link', 'other')
    source.topic_description = other
    source.request('the topic', recorded(other))
    assert wait(lambda: ('compile', 'other') in recorder.events
                and recorder.active.setup.model.name == 'other')
    steps = [event for event in recorder.events if event[0] in ('put', 'compile')]
    assert steps == [('put', 'two_link'), ('compile', 'two_link'), ('compile', 'other'),
                     ('put', 'other')], steps
    source.shutdown()


def test_lock_refuses_a_later_description_and_counts_it():
    source, recorder = make_source(description_updates='lock')
    source.topic_description = URDF
    source.request('the test', stub_model(URDF, source._params))
    assert wait(lambda: recorder.active is not None)
    source.topic_description = URDF.replace('two_link', 'other')
    source.request('the topic')
    assert source.counts['descriptions_rejected'] == 1
    assert 'description_updates is lock' in source.last_rejection
    assert recorder.active.setup.model.name == 'two_link'
    source.shutdown()


def test_an_unusable_description_keeps_no_model_and_says_why():
    source, recorder = make_source()
    source.receive_description('<robot name="x"></robot>')
    assert wait(lambda: source.error != '')
    assert recorder.active is None
    assert source.counts == {'descriptions': 1, 'descriptions_rejected': 1}
    assert 'no model yet' in recorder.events[-1][1]
    source.shutdown()


def test_a_received_payload_is_carried_onto_the_next_model():
    source, recorder = make_source()
    source.topic_description = URDF
    source.request('first', stub_model(URDF, source._params))
    assert wait(lambda: recorder.active is not None)
    model = recorder.active.setup.model
    assert source.receive_payload(model, 'fore', rbd.Payload(0.5))
    assert not source.receive_payload(node_model(URDF, source._params), 'fore',
                                      rbd.Payload(0.5))
    heavier = URDF.replace('two_link', 'heavier')
    source.topic_description = heavier
    source.request('second', stub_model(heavier, source._params))
    assert wait(lambda: recorder.active.setup.model.name == 'heavier')
    assert recorder.active.setup.model.payloads['fore'].mass == 0.5
    source.shutdown()


def test_diagnostics_without_a_model():
    status = diagnostics.dynamics_status(
        'node: dynamics', 10, None, ModelStatus('', 'UrdfError: bad', '', False),
        description_updates='accept', counts=dict.fromkeys(diagnostics.COUNTS, 0),
        callback_failures=3, last_joint_state_ns=None, desired_ns=4, sensors=(),
        compute=diagnostics.ComputeTimes(), saturated=(), own_thread=True,
        last_errors={'desired': 'no model yet'})
    values = {kv.key: kv.value for kv in status.values}
    assert status.message == 'no model: UrdfError: bad'
    assert values['callback_failures'] == '3'
    assert values['desired age [s]'] == '0.000'
    assert values['joint_states age [s]'] == 'never'
    assert values['last desired rejection'] == 'no model yet'
    assert values['joint_states taken on'] == 'a thread of their own'
    assert [kv.key for kv in status.values if kv.key in diagnostics.COUNTS] == list(
        diagnostics.COUNTS)


def test_count_failure_counts_on_the_node_counter_only():
    class Node:

        def __init__(self, counter):
            self.callback_failures = counter
            self.lines = []

        def get_logger(self):
            return self

        def error(self, msg, **kwargs):
            self.lines.append(msg)

    node = Node(FailureCounter())
    count_failure(node, RuntimeError('boom'))
    assert node.callback_failures.count == 1
    assert node.lines == ['a callback failed and was skipped: RuntimeError: boom']
    plain = Node(None)
    count_failure(plain, RuntimeError('boom'))
    assert plain.callback_failures is None


def test_describe_change(urdf):
    old = rbd.Model.from_urdf(urdf, compiled=False)
    new = rbd.Model.from_urdf(urdf.replace('<mass value="0.6"/>', '<mass value="1.6"/>'),
                              compiled=False)
    text = describe_change(old, new)
    assert 'total mass' in text and '-> ' in text
    cut = rbd.Model.from_urdf(urdf, root_link='link3', compiled=False)
    text = describe_change(old, cut)
    assert 'joints removed: joint1, joint2, joint3' in text
    assert describe_change(old, rbd.Model.from_urdf(urdf, compiled=False)) == ''
