"""
Spinning that survives a failing callback, and a thread of its own for a busy subscription.

An exception that escapes a callback is logged (throttled) and skipped; a node that wants such
failures counted (in its diagnostics) owns a :class:`FailureCounter` as its
``callback_failures`` attribute, which :func:`count_failure` increments.
"""

import contextlib
import sys
import threading
from typing import Callable, NamedTuple

import rclpy
from rclpy.callback_groups import CallbackGroup
from rclpy.exceptions import InvalidHandle
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.serialization import deserialize_message
from rclpy.subscription import Subscription
from rosgraph_msgs.msg import Clock

LOG_PERIOD = 2.0  # s, the rate limit of repeated errors
#: The interpreter's switch interval [s] while a :class:`SubscriptionThread` runs: how long
#: another thread running Python (the executor filling a 600-point trajectory, a model build)
#: keeps the GIL once the subscription's thread has a message waiting. Python's default, 5 ms,
#: is five periods of a 1 kHz stream.
SWITCH_INTERVAL = 0.0005


def run(node_factory, args=None):
    """
    Init rclpy, build the node, spin until shutdown, clean up (Humble/Jazzy/Kilted style).

    An exception escaping one callback (including rclpy failing to deserialize a message that
    arrived) is logged and skipped (:func:`count_failure`); the node keeps running. Ctrl-C and
    an external shutdown end it cleanly. Arguments rclpy refuses (a missing or malformed
    ``--params-file``) end the process with one line saying why, not a traceback.
    """
    if not init(args):
        sys.exit(1)
    node = None
    try:
        node = node_factory()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while rclpy.ok():
            try:
                executor.spin_once(timeout_sec=0.1)
            except (KeyboardInterrupt, ExternalShutdownException):
                break
            except Exception as exc:  # a callback must never take the process down
                count_failure(node, exc)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


def program_arguments(args=None):
    """
    Return a command's own arguments (the ROS ones removed), or ``None``: rcl refused them.

    The refusal (a missing or malformed ``--params-file``...) is said on one line.
    """
    from rclpy.utilities import remove_ros_args
    try:
        return remove_ros_args(sys.argv if args is None else args)[1:]
    except Exception as exc:  # rcl's refusal of the ROS arguments: one line
        print('error: %s' % init_failure(exc), file=sys.stderr)
        return None


def init(args=None):
    """Init rclpy: ``True``, or ``False`` where rcl refuses (said on one line)."""
    try:
        rclpy.init(args=args)
    except Exception as exc:  # rcl's refusal (a bad --params-file...): one line
        print('error: cannot start: %s' % init_failure(exc), file=sys.stderr)
        return False
    return True


def init_failure(exc):
    """Return rcl's reason for refusing ``rclpy.init``, on one line, without its source places."""
    text = str(exc).replace('failed to initialize rcl: ', '', 1)
    text = text.split(', at /')[0]  # (rcl appends ", at /path/file.c:line" per layer)
    return ' '.join(text.split())


class FailureCounter:
    """
    How many exceptions escaped the callbacks of a node (see :func:`count_failure`).

    Thread-safe: callbacks fail on the executor thread and on a :class:`SubscriptionThread`.
    """

    def __init__(self):
        self._count = 0
        self._lock = threading.Lock()

    def add(self):
        """Count one more failure."""
        with self._lock:
            self._count += 1

    @property
    def count(self):
        """Return the failures counted so far."""
        return self._count


def clock_subscription(node):
    """
    Return the subscription to ``/clock`` rclpy made for ``node`` (``use_sim_time``), or None.

    rclpy's time source makes it when the node starts on simulated time; it is the node's
    only subscription of ``rosgraph_msgs/Clock``.
    """
    for subscription in node.subscriptions:
        if subscription.msg_type is Clock:
            return subscription
    return None


def subscribe_on_thread(node, msg_type, topic, callback, qos, clock=False):
    """
    Subscribe ``node`` to ``topic`` with ``callback(msg)`` on a :class:`SubscriptionThread`.

    Every message is handled, in order, on a thread of the subscription's own, so a stream at
    1 kHz costs the executor nothing. ``clock``: rclpy's ``/clock`` subscription of a node on
    simulated time (:func:`clock_subscription`) is served by the same thread, as an input
    (:class:`SubscriptionThread`). Where rclpy has no wait set for the thread, the executor
    takes the messages (with a warning).

    Returns
    -------
    the subscription. Stop the node's threads (:func:`stop_threads`) before destroying it.

    """
    try:
        thread = SubscriptionThread(node, topic, inputs=1 if clock else 0)
    except RuntimeError as exc:
        node.get_logger().warning('%s; %s goes through the executor' % (exc, topic))
        thread = None
    subscription = node.create_subscription(msg_type, topic, callback, qos,
                                            callback_group=thread and thread.callback_group)
    if thread is not None:
        def on_message(msg, newer):
            callback(msg)  # (what it returns is no pause of the thread)

        thread.start(subscription, on_message, thread.adopt_clock() if clock else ())
    return subscription


def queued_messages(subscription, info=False, serialized=False):
    """
    Take the messages queued for ``subscription``, oldest first, one at a time (a generator).

    It stops at the first empty take, so messages that arrive meanwhile are taken too. The
    caller holds the subscription's handle (``with subscription.handle:``) while it iterates.
    ``info``: yield ``(msg, info)`` pairs, ``info`` the middleware's dictionary
    (``source_timestamp``: when it was published [ns], 0 where the middleware does not say).
    ``serialized``: the messages as bytes (:func:`handle_serialized` hands them on), which
    costs a small part of taking them deserialized.
    """
    handle = subscription.handle
    raw = serialized or subscription.raw
    taken = handle.take_message(subscription.msg_type, raw)
    while taken is not None:
        yield taken if info else taken[0]
        taken = handle.take_message(subscription.msg_type, raw)


def handle_serialized(callback, subscription, data):
    """Call ``subscription``'s ``callback`` with the serialized ``data`` (deserialized)."""
    callback(data if subscription.raw else deserialize_message(data, subscription.msg_type))


def published(info):
    """Return the source timestamp [ns] of a message's ``info``; 0 where the rmw gives none."""
    return info.get('source_timestamp', 0) if isinstance(info, dict) else 0


def published_after(info, stamp_ns):
    """
    Whether a message of ``info`` was published after ``stamp_ns`` (a source timestamp).

    False where either time is unknown (0), as for an rmw that does not give it.
    """
    source = published(info)
    return bool(stamp_ns) and bool(source) and source > stamp_ns


def stop_threads(node):
    """Stop every :class:`SubscriptionThread` of ``node``; call it before destroying the node."""
    for thread in SubscriptionThread.of(node):
        thread.stop()


def count_failure(node, exc):
    """
    Log (throttled) and count an exception that escaped a callback of ``node``.

    The count goes to ``node.callback_failures`` when the node has a :class:`FailureCounter`
    there; other nodes only get the log line.
    """
    counter = getattr(node, 'callback_failures', None)
    if isinstance(counter, FailureCounter):
        counter.add()
    node.get_logger().error('a callback failed and was skipped: %s: %s'
                            % (type(exc).__name__, exc), throttle_duration_sec=LOG_PERIOD)


class _OwnThread(CallbackGroup):
    """A callback group no executor runs or waits on: its subscription has a thread."""

    def can_execute(self, entity):
        return False

    def beginning_execution(self, entity):
        return False

    def ending_execution(self, entity):
        pass


class ThreadInput(NamedTuple):
    """
    An input a :class:`SubscriptionThread` handles beside its main messages.

    Attributes
    ----------
    subscription
        the input's subscription, in the thread's :attr:`SubscriptionThread.callback_group`.
    callback
        ``callback(msg)``: called with each of its messages.

    """

    subscription: Subscription
    callback: Callable


class SubscriptionThread:
    """
    Serve one subscription of a node on a thread of its own, outside the executor.

    rclpy's executor rebuilds its wait set from every entity of the node on each wake-up and
    wraps each callback in a task: a cost per message several times that of a joint state's
    dynamics. This thread waits on the one subscription with a wait set of its own and, at
    each wake-up, takes and handles every queued message (the primitives rclpy's own
    ``wait_for_message`` uses). Callbacks run on this thread: they must only swap whole
    objects that other threads read.

    Create it before the subscription, pass :attr:`callback_group` to ``create_subscription``
    (the executor then leaves that subscription alone), then :meth:`start` it.

    Inputs that the main subscription's messages depend on (the desired state a joint state is
    answered with) can be served by the same thread: at each wake-up it takes the queued main
    messages, then handles the queued inputs published before the newest of them, then the
    main messages, then the inputs published after it (by their source timestamps; an input
    without one counts as before). An input published before a joint state is then used for
    that joint state however late the executor runs, and one published just after it (a
    sensor's reading in the same control cycle) does not delay its answer.
    An input whose subscription is destroyed while the thread runs is dropped from the thread;
    the main subscription's end ends it.

    Raises
    ------
    RuntimeError
        this rclpy has no wait set to build the thread on (the constructor
        fails before anything is created, so the caller can subscribe the usual way).

    """

    WAIT_NS = 100_000_000  # how often the thread looks at its stop flag
    _started = set()  # the threads started and not stopped (stop_threads)

    def __init__(self, node, name='subscription thread', inputs=0):
        """
        Make the thread (not started yet).

        Parameters
        ----------
        node
            the node whose subscriptions this thread serves.
        name
            the thread's name.
        inputs
            how many input subscriptions :meth:`start` will be given.

        """
        try:
            from rclpy.impl.implementation_singleton import rclpy_implementation
            self._wait_set = rclpy_implementation.WaitSet(1 + inputs, 0, 0, 0, 0, 0,
                                                          node.context.handle)
        except Exception as exc:  # not the rclpy this was written against
            raise RuntimeError('no rclpy wait set: %s: %s' % (type(exc).__name__, exc))
        self.callback_group = _OwnThread()
        self._node = node
        self._subscription = None
        self._callback = None
        self._inputs = ()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self, subscription, callback, inputs=()):
        """
        Serve ``subscription`` on this thread.

        Serve ``subscription`` (created in :attr:`callback_group`) with
        ``callback(msg, newer)``: ``newer`` is True when a newer message was already taken in
        the same wake-up (the callback is called for it next). The callback may return a
        pause [s]: the thread then waits that long once the wake-up's inputs are handled,
        leaving the interpreter to other threads. ``inputs``: :class:`ThreadInput` entries
        (their subscriptions also in :attr:`callback_group`) handled at each wake-up before or
        after the main messages, as they were published (the class's description).
        The process's switch interval is lowered to :data:`SWITCH_INTERVAL`, so that a message
        waits for the interpreter a fraction of a millisecond, not 5 ms, while another thread
        runs Python.
        """
        self._subscription = subscription
        self._callback = callback
        self._inputs = tuple(inputs)
        SubscriptionThread._started.add(self)
        if sys.getswitchinterval() > SWITCH_INTERVAL:  # (for the process: never raised here)
            sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread.start()

    def adopt_clock(self):
        """
        Move rclpy's ``/clock`` subscription of the node (``use_sim_time``) to this thread.

        Returns the :class:`ThreadInput` entries to give :meth:`start`: one, or
        none when the node is not on simulated time. Call it before :meth:`start`. The
        executor leaves the subscription alone from then on, and its QoS event handlers too
        (left with the executor, they keep it busy waking up for the events of a subscription
        it never takes).
        """
        subscription = clock_subscription(self._node)
        if subscription is None:
            return []
        subscription.callback_group = self.callback_group
        for handler in getattr(subscription, 'event_handlers', ()):
            handler.callback_group = self.callback_group
        return [ThreadInput(subscription, subscription.callback)]

    @classmethod
    def of(cls, node):
        """Return the threads of ``node`` started and not stopped yet."""
        return [thread for thread in cls._started if thread._node is node]

    def stop(self, timeout=1.0):
        """Ask the thread to end and wait for it (at most ``timeout`` s)."""
        self._stop.set()
        SubscriptionThread._started.discard(self)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self):
        sub = self._subscription
        inputs = self._inputs
        wait_set = self._wait_set
        context = self._node.context
        while not self._stop.is_set() and context.ok():
            pause = None  # [s], as the main callback asks
            try:
                with contextlib.ExitStack() as handles:
                    handles.enter_context(sub.handle)
                    handles.enter_context(context.handle)
                    inputs = self._live_inputs(handles, inputs)
                    wait_set.clear_entities()
                    wait_set.add_subscription(sub.handle)
                    for input_sub, _ in inputs:
                        wait_set.add_subscription(input_sub.handle)
                    wait_set.wait(self.WAIT_NS)  # releases the GIL
                    if not wait_set.get_ready_entities('subscription'):
                        continue
                    # the main messages first, then the inputs, then the main messages'
                    # callbacks: an input published before a main message is taken by then
                    # (taking the inputs first, one arriving while they are taken, just
                    # before its main message, would miss that message); the inputs
                    # published after the newest main message wait until it is answered
                    queued = list(queued_messages(sub, info=True))
                    newest = max((published(info) for _, info in queued), default=0)
                    later = self._inputs_before(inputs, newest)
                    last = len(queued) - 1
                    for k, (msg, _) in enumerate(queued):
                        if self._stop.is_set():
                            break
                        pause = self._call(self._callback, msg, k < last) or pause
                    for entry in later:
                        if self._stop.is_set():
                            break
                        self._call(handle_serialized, *entry)
                if pause:
                    self._stop.wait(pause)
            except InvalidHandle:  # the subscription or the context is being destroyed
                break
            except Exception as exc:  # rclpy failing to take a message: skip it
                if not context.ok():
                    break
                count_failure(self._node, exc)
                self._stop.wait(0.001)  # never a busy loop, whatever keeps failing

    def _inputs_before(self, inputs, newest):
        """
        Handle the queued inputs published before ``newest`` (ns); return the others.

        The others, ``(callback, subscription, data)`` in order, were published after the
        newest main message: they are handled after its callback, which they would only delay.
        Once one message of an input is left for later, so are the ones behind it (its order
        is kept). The inputs are taken serialized, so a message left for later is also
        deserialized (the larger part of taking it) after that callback.
        """
        later = []
        for input_sub, input_callback in inputs:
            waiting = False
            for data, info in queued_messages(input_sub, info=True, serialized=True):
                if self._stop.is_set():
                    return []
                waiting = waiting or published_after(info, newest)
                if waiting:
                    later.append((input_callback, input_sub, data))
                else:
                    self._call(handle_serialized, input_callback, input_sub, data)
        return later

    def _live_inputs(self, handles, inputs):
        """Enter the handles of ``inputs``; the inputs whose subscription still exists."""
        live = []
        for entry in inputs:
            try:
                handles.enter_context(entry.subscription.handle)
            except InvalidHandle:  # destroyed (rclpy's /clock when use_sim_time goes off)
                continue
            live.append(entry)
        return inputs if len(live) == len(inputs) else tuple(live)

    def _call(self, callback, *args):
        """Return what ``callback(*args)`` returns; ``None`` if it raised (counted)."""
        try:
            return callback(*args)
        except Exception as exc:  # as in run(): never end the thread
            count_failure(self._node, exc)
            return None
