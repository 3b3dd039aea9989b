"""
The node's parameters: declared from the table, and changed whole or not at all.

:class:`ParameterTransaction` declares every parameter of the table
(:mod:`rbd_dynamics.ros.parameters`, from :mod:`rbd_dynamics.control.config`) and those of each
force/torque sensor, and answers a parameter change: each value is checked against its spec,
then the whole configuration against the model in use, the change planned (what it changes,
without touching anything) and committed under the setup lock, or refused whole with one
reason. A change that rebuilds the model, or one that may correct a refused description, is
handed to the :class:`~rbd_dynamics.ros.model_source.ModelSource` once committed.
"""

from rbd_dynamics.control.config import check_lengths, Config
from rbd_dynamics.control.sensors import Sensor
from rbd_dynamics.control.setup import Setup
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterUninitializedException)

from . import parameters
from .model_source import ModelInUse, payload_changes

NS = 1e9


class _Sensor(Sensor):
    """A configured force/torque sensor (the controller's) with its topic and convention."""

    def __init__(self, name):
        super().__init__(name)
        self.topic = ''
        self.convention = parameters.CONVENTIONS[0]


class _Refused(Exception):
    """A parameter change refused, with its reason."""


class _Plan:
    """
    What an accepted parameter change does, computed before anything changes.

    Attributes
    ----------
    params, config
        the parameters after the change and their configuration.
    active
        the new :class:`~rbd_dynamics.ros.model_source.ModelInUse`, or ``None`` when it stays.
    model, payloads
        the model in use and the ``(link, Payload)`` to put on it, in order.
    sensors
        the sensors whose settings change.
    rebuild
        names of the changed parameters that rebuild the model (sorted).
    checked
        the model the rebuild was checked with, or ``None``.
    retry
        names of the changed setup and payload parameters when the description was refused
        and no model is in use (sorted): the description is built again with them.

    """

    def __init__(self, params, config):
        self.params = params
        self.config = config
        self.active = None
        self.model = None
        self.payloads = []
        self.sensors = []
        self.rebuild = []
        self.checked = None
        self.retry = []


class ParameterTransaction:
    """
    Declare the node's parameters and apply a change to them whole, or refuse it whole.

    Attributes
    ----------
    params
        the parameters by name (replaced whole by a change: read it anew each time).
    config
        the :class:`~rbd_dynamics.control.config.Config` of ``params``.
    sensors
        the force/torque sensors of ``wrench_sensors``, with their settings.
    counts
        ``rejected_parameters``: the changes refused.

    """

    def __init__(self, node, lock, in_use, put_in_use):
        """
        Declare the parameters on ``node`` (an invalid override falls back to the default).

        Parameters
        ----------
        node
            the rclpy node the parameters are declared on.
        lock
            the setup lock, held while the model in use changes.
        in_use
            ``() -> ModelInUse or None``: the model in use.
        put_in_use
            ``(ModelInUse) -> None``: put a new setup of it in use (called under ``lock``).

        """
        self._node = node
        self._log = node.get_logger()
        self._lock = lock
        self._in_use = in_use
        self._put_in_use = put_in_use
        self._source = None
        self.counts = {'rejected_parameters': 0}
        self.params = {}
        self._specs = {}
        for spec in parameters.PARAMETERS:
            self._declare(spec)
        self.sensors = []
        for name in self.params['wrench_sensors']:
            for spec in parameters.sensor_parameters(name):
                self._declare(spec)
            sensor = _Sensor(name)
            self.sensors.append(sensor)
            self._apply_sensor(sensor)
        reason = check_lengths(Config.from_parameters(self.params),
                               len(self.params['joints']) or None)
        if reason:
            self._log.error('parameters: %s' % reason)
        self.config = Config.from_parameters(self.params)

    def attach(self, source):
        """Take the :class:`~rbd_dynamics.ros.model_source.ModelSource` changes are built by."""
        self._source = source

    def _declare(self, spec):
        """Declare one parameter of the table; an invalid override falls back to the default."""
        descriptor = ParameterDescriptor(description=spec.description, read_only=spec.read_only,
                                         additional_constraints=spec.constraints,
                                         dynamic_typing=spec.dynamic)
        if spec.float_range is not None:
            descriptor.floating_point_range = [FloatingPointRange(
                from_value=spec.float_range[0], to_value=spec.float_range[1], step=0.0)]
        if spec.int_range is not None:
            descriptor.integer_range = [IntegerRange(
                from_value=spec.int_range[0], to_value=spec.int_range[1], step=0)]
        # An empty list cannot carry its element type; declare the type instead (an unset
        # parameter reads as the empty list).
        default = spec.default
        initial = parameters.parameter_type(spec) if isinstance(default, list) and not default \
            else default
        try:
            value = self._node.declare_parameter(spec.name, initial, descriptor).value
        except (ParameterUninitializedException, InvalidParameterTypeException,
                InvalidParameterValueException) as exc:
            self._log.error('parameter %s: %s; using the default %r' % (spec.name, exc, default))
            value = self._node.declare_parameter(spec.name, initial, descriptor,
                                                 ignore_override=True).value
        value = self._as_value(spec, value)
        reason = parameters.check(spec, value)
        if reason:
            self._log.error('parameter %s; using the default %r' % (reason, default))
            value = default
        self._specs[spec.name] = spec
        self.params[spec.name] = value

    @staticmethod
    def _as_value(spec, value):
        if value is None:
            return list(spec.default) if isinstance(spec.default, list) else spec.default
        if spec.dynamic:  # a number, or a sequence of them (rclpy gives array.array)
            return value if isinstance(value, (bool, int, float, str)) else list(value)
        return list(value) if isinstance(spec.default, list) else value

    def _apply_sensor(self, sensor):
        prefix = 'wrench.%s.' % sensor.name
        sensor.topic = self.params[prefix + 'topic']
        sensor.frame = self.params[prefix + 'frame']
        sensor.convention = self.params[prefix + 'convention']
        sensor.timeout_ns = int(self.params[prefix + 'timeout'] * NS)
        sensor.compensate = bool(self.params[prefix + 'compensate_payload'])

    def on_set_parameters(self, params):
        """
        Check, plan and commit a parameter change: it is applied whole or refused whole.

        The configuration is checked and the change planned under the setup lock, held on
        through the commit: a model build cannot swap in between, so the plan is applied to the
        model it was made against.
        """
        try:
            pending = self._check_values(params)
            with self._lock:
                plan = self._plan(pending)
                if plan is not None:
                    self._commit(plan)
        except _Refused as refused:
            return self._reject(str(refused))
        if plan is not None:
            for sensor in plan.sensors:
                self._apply_sensor(sensor)
            if plan.rebuild:
                self._source.request('a parameter change (%s)' % ', '.join(plan.rebuild),
                                     plan.checked)
            elif plan.retry:
                self._source.request('a parameter change (%s) after the description was '
                                     'refused' % ', '.join(plan.retry))
        return SetParametersResult(successful=True)

    def _check_values(self, params):
        """Check each new value against its spec: the parameters as they would be."""
        pending = dict(self.params)
        for param in params:
            spec = self._specs.get(param.name)
            if spec is None:
                continue  # parameters of other layers (rclpy's own), not ours to judge
            value = self._as_value(spec, param.value)
            reason = parameters.check(spec, value)
            if reason:
                raise _Refused(reason)
            pending[param.name] = value
        return pending

    def _check_configuration(self, plan, model):
        """Check the whole pending configuration against ``model`` in use (or ``None``)."""
        if plan.params['base.type'] == 'floating' and not plan.params['base.imu.topic']:
            raise _Refused('base.type floating needs the IMU: base.imu.topic is empty (it is '
                           'read at start: give both when the node starts)')
        if model is None:
            reason = check_lengths(plan.config, len(plan.config.joints) or None)
            if reason:
                raise _Refused(reason)
            return
        if plan.rebuild and plan.params['description_updates'] == 'lock':
            raise _Refused('description_updates is lock: the model in use stays (%s cannot '
                           'change)' % ', '.join(plan.rebuild))
        if plan.rebuild:
            # A change that rebuilds the model is checked against the configuration now, so
            # a refused rebuild cannot leave a parameter that the model in use lacks.
            try:
                plan.checked = self._source.check_rebuild(plan.params, plan.config)
            except Exception as exc:  # (any reason a description is refused)
                raise _Refused('%s: %s' % (type(exc).__name__, exc)) from exc

    def _plan(self, pending):
        """
        Check ``pending`` as a whole and plan what it changes, touching nothing.

        Called under the setup lock, so the model in use cannot change meanwhile.

        Returns
        -------
        _Plan or None
            the plan, or ``None`` when no value changes.

        Raises
        ------
        _Refused
            the change cannot be applied, with the reason.

        """
        changed = {name for name in pending if pending[name] != self.params[name]}
        if not changed:
            return None
        plan = _Plan(pending, Config.from_parameters(pending))
        plan.rebuild = sorted(n for n in changed if self._specs[n].effect == parameters.MODEL)
        effects = {self._specs[name].effect for name in changed}
        active = self._in_use()
        model = active.setup.model if active is not None else None
        self._check_configuration(plan, model)
        if model is not None and parameters.SETUP in effects:
            try:
                plan.active = ModelInUse(Setup(model, plan.config), active.merger)
            except ValueError as exc:
                raise _Refused(str(exc)) from exc
        if model is not None and parameters.PAYLOAD in effects:
            plan.model = model
            try:
                plan.payloads = payload_changes(model, pending, self.params['payload.link'])
            except ValueError as exc:
                raise _Refused(str(exc)) from exc
        plan.sensors = [sensor for sensor in self.sensors
                        if any(name.startswith('wrench.%s.' % sensor.name) for name in changed)]
        if model is None and self._source.error:
            # the description was refused, perhaps for a setting this change corrects (an
            # unknown task.link, joints the model lacks): it is built again with it
            plan.retry = sorted(n for n in changed
                                if self._specs[n].effect in (parameters.SETUP, parameters.PAYLOAD))
        return plan

    def _commit(self, plan):
        """Apply a planned change to the model in use and the parameters (under the lock)."""
        for link, payload in plan.payloads:
            plan.model.set_payload(link, payload.mass, payload.com, payload.inertia)
        self.params = plan.params
        self.config = plan.config
        self._source.configure(plan.params, plan.config)
        if plan.active is not None:
            self._put_in_use(plan.active)

    def _reject(self, reason):
        self.counts['rejected_parameters'] += 1
        self._log.warning('parameter change rejected: %s' % reason)
        return SetParametersResult(successful=False, reason=reason)
