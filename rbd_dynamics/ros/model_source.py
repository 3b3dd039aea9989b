"""
The model a node runs on: where its description comes from and how a new one replaces it.

:class:`ModelSource` owns the model's lifecycle: the description text (the ``robot_description``
parameter, or else the latched topic), the worker thread that parses a description and compiles
its fast path, the generations (a newer description wins over one still being built),
``description_updates: lock``, the log lines that announce a new model, the payloads carried
over onto it (``payload.*`` parameters and those received on ``~/payload``), the kernels built
on demand on a thread of their own (:meth:`ModelSource.kernels_ready`: the wrench estimate's,
the task-space law's) and the status the diagnostics report. It knows no node: it is given a
logger, the lock under which the model in use is swapped, and two callables that read and
replace the model in use, a :class:`ModelInUse`.
"""

import concurrent.futures
import gc
import threading
import time
from typing import NamedTuple
import warnings

import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics import compiled as compiled_kernels
from rbd_dynamics.control import task
from rbd_dynamics.control.joint_states import joint_state_problem, JointStateMerger
from rbd_dynamics.control.setup import Setup

from . import parameters

LOG_PERIOD = 2.0  # s, the rate limit of repeated warnings


class ModelInUse(NamedTuple):
    """
    The model in use, as the joint-state path reads it: one reference, swapped whole.

    Attributes
    ----------
    setup
        the :class:`~rbd_dynamics.control.setup.Setup` of the model and the parameters.
    merger
        the :class:`~rbd_dynamics.control.joint_states.JointStateMerger` of its joints.

    """

    setup: Setup
    merger: JointStateMerger


class ModelStatus(NamedTuple):
    """
    What the diagnostics say about the model.

    Attributes
    ----------
    source
        where the model in use came from (``''``: no model yet).
    error
        why the last description was refused (``''``: it was not).
    building
        source of the description being built (``''``: none).
    compiling
        the compiled path of the model in use is being built.

    """

    source: str
    error: str
    building: str
    compiling: bool


class ModelSource:
    """
    Build the node's model from its description, on a worker thread, and put it in use.

    Threads: :meth:`receive_description`, :meth:`request`, :meth:`configure` and
    :meth:`receive_payload` are called from the node's executor thread; the build runs on a
    worker thread of its own and swaps the new :class:`ModelInUse` in under ``lock``, the lock the
    node holds while it changes the model in use itself. Readers of the model in use (the
    joint-state path) never wait: they read it as one reference.
    """

    def __init__(self, logger, lock, in_use, put_in_use, params, config):
        """
        Make the source (no description yet).

        Parameters
        ----------
        logger
            where the model's lines are logged (an rclpy logger).
        lock
            held while the model in use is replaced, by this source or by its owner.
        in_use
            ``() -> ModelInUse or None``: the model in use.
        put_in_use
            ``(ModelInUse) -> None``: put a new model in use (called under ``lock``, after
            the lines that announce it are logged).
        params
            the node's parameters by name (see :meth:`configure`).
        config
            the :class:`~rbd_dynamics.control.config.Config` of those parameters.

        """
        self._log = logger
        self._lock = lock
        self._in_use = in_use
        self._put_in_use = put_in_use
        self._params = params
        self._config = config
        self._builder = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._generation = 0
        self._topic_payloads = {}  # link -> rbd.Payload from ~/payload
        self._model_text = None  # (text, params) the model in use was built from
        self.topic_description = None  # the latest text of the robot_description topic
        self.source = ''  # where the model in use came from
        self.error = ''  # why the last description was refused
        self.building = ''  # source of the description being built, if any
        self.compiling = False  # the compiled path of the model in use is being built
        self.counts = {'descriptions': 0, 'descriptions_rejected': 0}
        self.last_rejection = ''  # the last description refused by description_updates: lock
        # the threads compiling the kernels of the wrench estimate and the task-space law
        # (one per purpose), and why they are not ready, for the diagnostics
        self._warm_ups = {}
        self._kernels_built = set()  # the kernels tuples kernels_ready found built
        self._warm_up_notes = {}
        self._warm_up_failed = set()

    def configure(self, params, config):
        """Take the node's parameters (by name) and their configuration; call under the lock."""
        self._params = params
        self._config = config

    def status(self):
        """Return the :class:`ModelStatus` of now."""
        return ModelStatus(self.source, self.error, self.building, self.compiling)

    def waiting_reason(self):
        """Say why there is no model in use yet."""
        if self.building:
            return 'building the model of %s' % self.building
        return self.error or 'waiting for the robot_description topic'

    # Descriptions -------------------------------------------------------------------------------

    def receive_description(self, text):
        """Take a description from the topic; it is built unless the parameter holds one."""
        self.counts['descriptions'] += 1
        self.topic_description = text
        if self._params['robot_description']:
            self._log.info('robot_description topic ignored: the robot_description parameter '
                           'is set', throttle_duration_sec=LOG_PERIOD)
            return
        self.request('the robot_description topic')

    def description(self, params):
        """Return the description text ``params`` select (``None``: none yet)."""
        return params['robot_description'] or self.topic_description

    def check_rebuild(self, params, config):
        """
        Build the model that ``params`` would rebuild and check ``config`` on it.

        Returns
        -------
        rbd_dynamics.Model or None
            that model, not in use yet, or ``None`` when there is no description yet.

        Raises
        ------
        Exception
            any reason the description or the configuration is refused.

        """
        text = self.description(params)
        if not text:
            return None
        model = node_model(text, params)
        Setup(model, config)
        return model

    def request(self, source, model=None):
        """
        Build the model of the current description on the worker thread.

        Parameters
        ----------
        source
            where the description comes from, as the log lines say it.
        model
            that model, when it was already parsed with the current parameters.

        """
        text = self.description(self._params)
        if text is None:
            return
        model_params = {spec.name: self._params[spec.name] for spec in parameters.PARAMETERS
                        if spec.effect == parameters.MODEL}
        in_use = self._in_use() is not None
        if in_use and self._model_text == (text, model_params):
            return  # the same description again (a restarted robot_state_publisher)
        if in_use and self._params['description_updates'] == 'lock':
            self.counts['descriptions_rejected'] += 1
            reason = ('description_updates is lock: the model of %s stays; the description '
                      'from %s is refused' % (self.source, source))
            self.last_rejection = reason
            self._log.warning(reason, throttle_duration_sec=LOG_PERIOD)
            return
        self._generation += 1
        self.building = source
        self._builder.submit(self._build, self._generation, source, text, model_params, model)

    def _build(self, generation, source, text, params, model=None):
        log = self._log
        replacing = self._in_use() is not None
        try:
            if model is None:
                model = node_model(text, params)
            if replacing:
                # A model that replaces one in use is compiled before the swap: the torque
                # stream goes on with the compiled path of the old model meanwhile (a fraction
                # of a second from numba's cache), where the new one on the NumPy path would
                # answer only the newest state of each wake-up, with pauses.
                compiled, spent = self._compile(model)
            with self._lock:
                if generation != self._generation:
                    return  # a newer description is on its way
                payload_notes = self._payloads_onto(model)
                # the joint parameters may have changed while the model was built
                setup = Setup(model, self._config)
                previous = self._in_use()
                merger = JointStateMerger(setup.names)
                if previous is not None:
                    merger.adopt(previous.merger)
                # Said before the swap: a torque of the new model is never seen ahead of the
                # lines that announce it.
                self._announce(source, previous, setup, payload_notes)
                self.compiling = not replacing  # (compiled below)
                self._put_in_use(ModelInUse(setup, merger))
                self._model_text = (text, params)
                self.source = source
                self.error = ''
        except Exception as exc:  # an unusable description must never stop the node
            kept = ('; keeping the model of %s' % self.source if self._in_use() is not None
                    else '; no model yet, nothing is published')
            # (the error first: whoever reads the log line finds it set)
            self.error = '%s: %s' % (type(exc).__name__, exc)
            self.counts['descriptions_rejected'] += 1
            log.error('robot description from %s rejected: %s%s' % (source, exc, kept))
            return
        finally:
            if generation == self._generation:
                self.building = ''
        if not replacing:
            # The first model: torques flow from now on, on the NumPy path (the newest joint
            # state, then a pause); the compiled path takes over when it is built. Loaded from
            # numba's disk cache that is a fraction of a second; the first start on a machine
            # compiles for seconds (python -m rbd_dynamics precompile does it ahead of time),
            # with exact torques published meanwhile.
            try:
                compiled, spent = self._compile(model)
            finally:
                self.compiling = False
        log.info('compiled path %s (%.2f s)'
                 % ('in use' if compiled else 'unavailable: NumPy path', spent))
        # Move everything alive now (numba, the model) out of the collector's reach: a full
        # collection over those objects would otherwise pause the joint-state path for
        # milliseconds every so often.
        gc.collect()
        gc.freeze()

    def _compile(self, model):
        """
        Build the model's compiled path; return whether it is in use and the seconds spent.

        With ``command_output: task``, the task-space law's kernels are built first: until the
        compiled path is in use the law runs on the NumPy path, and once it is, it needs no
        further build (which would leave the command at the gravity compensation meanwhile).
        """
        start = time.monotonic()
        config = self._config
        if config.task_link and config.command_output == 'task':
            try:
                compiled_kernels.prepare(model, task.KERNELS)
            except Exception as exc:  # (whatever numba raises) the node tries again on use
                self._log.error("the task-space law's kernels could not be built: %s" % exc)
        compiled = model.compile()
        return compiled, time.monotonic() - start

    def _announce(self, source, previous, setup, payload_notes):
        """Log what a new model of ``source`` is and, over ``previous``, what it changes."""
        log = self._log
        model = setup.model
        if previous is not None:
            change = describe_change(previous.setup.model, model)
            log.warning('robot description from %s replaces the model in use (of %s): %s'
                        % (source, self.source, change or 'same joints and mass'))
        for note in list(model.warnings) + payload_notes:
            log.warning('robot description: %s (accepted)' % note)
        log.info('model %r from %s: %d joints%s, %d links; output joints: %s'
                 % (model.name, source, setup.nv,
                    ' on a floating base (%s)' % model.base_link if setup.floating else '',
                    len(model.link_names), ', '.join(setup.joints)))

    # Payloads -----------------------------------------------------------------------------------

    def _payloads_onto(self, model):
        """
        Put the configured and received payloads onto a new model.

        Returns
        -------
        list of str
            sentences about the payloads that do not fit it.

        """
        notes = []
        try:
            for link, payload in payload_changes(model, self._params):
                model.set_payload(link, payload.mass, payload.com, payload.inertia)
        except ValueError as exc:
            notes.append('payload parameters not applied: %s' % exc)
        for link, payload in list(self._topic_payloads.items()):
            if link in model.link_body:
                model.set_payload(link, payload.mass, payload.com, payload.inertia)
            else:
                notes.append('payload on %s dropped: no such link in the new model' % link)
                self._topic_payloads.pop(link, None)
        return notes

    def receive_payload(self, model, link, payload):
        """
        Put a payload received on ``~/payload`` on ``model``, if it is still in use.

        It stays on every later model that has ``link``; ``payload.mass = 0`` removes it.

        Returns
        -------
        bool
            False when the model changed while the payload arrived (nothing changes then).

        """
        with self._lock:
            in_use = self._in_use()
            if in_use is None or in_use.setup.model is not model:
                return False
            model.set_payload(link, payload.mass, payload.com, payload.inertia)
            if payload.mass:
                self._topic_payloads[link] = payload
            else:
                self._topic_payloads.pop(link, None)
        return True

    # Kernels on demand ---------------------------------------------------------------------------

    def kernels_ready(self, model, purpose, kernels, setting, meanwhile):
        """
        Say whether ``kernels`` run on ``model`` without compiling on the torque path.

        The compiled kernels of the equations of motion are built (or loaded from numba's
        cache) when a model first needs them; that takes seconds without ``precompile``, so
        they are built on a thread of their own the first time ``purpose`` (the wrench
        estimate, the task-space law) asks, and ``purpose`` waits for them, doing
        ``meanwhile``.
        """
        if kernels in self._kernels_built:
            return True
        if compiled_kernels.ready(model, kernels):  # (also where they run in NumPy)
            if model.runtime.eom_packed is not None:
                # built once, built for the process: no need to ask on every joint state
                self._kernels_built.add(kernels)
            return True
        warm_up = self._warm_ups.get(purpose)
        if warm_up is None or not (warm_up.is_alive() or purpose in self._warm_up_failed):
            # (again for a packed model made while it compiled, a payload's: only binds then)
            if warm_up is None or warm_up.kernels != kernels:
                self._warm_up_notes[purpose] = 'waiting for the compiled %s' % ', '.join(kernels)
                self._log.info(
                    'building the compiled %s for %s (once per process; python -m '
                    "rbd_dynamics precompile keeps them in numba's cache); %s"
                    % (', '.join(kernels), setting, meanwhile))
            warm_up = threading.Thread(target=self._warm_up, args=(model, purpose, kernels,
                                                                   setting),
                                       name='rbd_dynamics %s warm-up' % purpose, daemon=True)
            warm_up.kernels = kernels
            self._warm_ups[purpose] = warm_up
            warm_up.start()
        return False

    def warm_up_note(self, purpose):
        """Say why the kernels ``purpose`` waits for are not ready (``''``: they are)."""
        return self._warm_up_notes.get(purpose, '')

    def _warm_up(self, model, purpose, kernels, setting):
        try:
            compiled_kernels.prepare(model, kernels)
        except Exception as exc:  # (whatever numba raises) the torques go on without them
            self._warm_up_failed.add(purpose)
            self._warm_up_notes[purpose] = '%s could not be compiled: %s' % (
                ', '.join(kernels), exc)
            self._log.error('%s: %s' % (setting, self._warm_up_notes[purpose]))
            return
        self._warm_up_notes.pop(purpose, None)
        self._log.info('compiled %s ready for %s' % (', '.join(kernels), setting))

    def shutdown(self):
        """Stop taking builds (one under way finishes on its own)."""
        self._builder.shutdown(wait=False)


def payload_changes(model, params, previous_link=''):
    """
    Plan the ``payload.*`` parameters' payload on ``model``, changing nothing.

    Parameters
    ----------
    model
        the model the payload goes on.
    params
        the parameters by name (``payload.link``, ``.mass``, ``.com``, ``.inertia``).
    previous_link
        the link that held the configured payload until now (it leaves that link).

    Returns
    -------
    list of (str, rbd_dynamics.Payload)
        ``(link, payload)`` to put on the model in this order; a zero mass removes one.

    Raises
    ------
    ValueError
        an unknown link or an unusable payload.

    """
    link = params['payload.link']
    empty = rbd.Payload(0.0)
    if not link:
        if previous_link and previous_link in model.link_body:
            return [(previous_link, empty)]
        return []
    model.check_link(link)
    payload = rbd.Payload(params['payload.mass'], params['payload.com'],
                          params['payload.inertia'])
    changes = []
    if previous_link and previous_link != link and previous_link in model.link_body:
        changes.append((previous_link, empty))
    changes.append((link, payload))
    return changes


def node_model(text, params):
    """
    Build the model of a description for the node, on the NumPy path.

    Parameters
    ----------
    text
        the URDF.
    params
        the node's parameters (``gravity``, ``root_link``, ``base.type``,
        ``max_description_bytes``).

    Returns
    -------
    rbd_dynamics.Model
        the model, not compiled yet.

    Raises
    ------
    UrdfError
        an unusable description.
    ValueError
        a model that joint states cannot describe (a joint with more than one coordinate,
        no moving joint).

    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf(text, gravity=params['gravity'],
                                    root_link=params['root_link'] or None,
                                    max_bytes=params['max_description_bytes'], compiled=False,
                                    floating_base=params['base.type'] == 'floating')
    problem = joint_state_problem(model)
    if problem:
        raise ValueError(problem)
    return model


def model_mass(model):
    """Total mass of the model's links and payloads [kg]."""
    return float(sum(inertia[3, 3] for inertia in model.runtime.link_inertia.values()))


def describe_change(old, new):
    """Say what replacing model ``old`` by ``new`` changes, as a sentence, or ``''``."""
    parts = []
    added = [n for n in new.joint_names if n not in old.joint_names]
    removed = [n for n in old.joint_names if n not in new.joint_names]
    if added:
        parts.append('joints added: %s' % ', '.join(added))
    if removed:
        parts.append('joints removed: %s' % ', '.join(removed))
    old_mass, new_mass = model_mass(old), model_mass(new)
    if abs(new_mass - old_mass) > 1e-9 * max(1.0, old_mass):
        parts.append('total mass %.6g kg -> %.6g kg' % (old_mass, new_mass))
    if not np.array_equal(old.gravity, new.gravity):
        parts.append('gravity %s -> %s' % (old.gravity.tolist(), new.gravity.tolist()))
    if (old.base_joint is None) != (new.base_joint is None):
        parts.append('base %s -> %s' % tuple('fixed' if m.base_joint is None else 'floating'
                                             for m in (old, new)))
    if not parts and old.joint_names != new.joint_names:
        parts.append('joint order changed')
    return '; '.join(parts)
