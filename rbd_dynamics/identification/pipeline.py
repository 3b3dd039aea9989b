"""
Identification as one call: :func:`identify` takes a :class:`Settings` and gives a :class:`Result`.

The stages, in order: the recordings read; the joints that do not move held
(:mod:`.hold`); the differentiation window chosen (:func:`choose_window`); the recordings merged,
differentiated and split for validation (:mod:`.recordings`); the effort scales estimated or
applied (:mod:`.scales`); the friction widths (:mod:`.friction`); the regressor stacked
(:mod:`.stack`); the physically consistent solve (:mod:`.fit`); the identified description and
its predictions of the validation data (:mod:`.report`). Nothing is written: the caller (the
``identify`` command, a script, a test) writes what it wants of the result
(:meth:`Result.files`). Errors are :class:`~rbd_dynamics.analysis.AnalysisError` (or
:class:`~.fit.NotExcitedError`, one of them) with a message that names the problem.
"""

import os
import time

import numpy as np

from . import hold
from .blas import blas_threads
from .columns import Layout
from .fit import NotExcitedError, residual_share, solve
from .friction import recording_widths
from .recordings import fitted_rows, held_model, read_states, recording, split_holdout
from .report import CSV_NAME, plot_predictions, PNG_NAME, predictions, rms_errors, \
    unconstrained_error, write_prediction_csv
from .scales import estimate_scales
from .stack import DEFAULT_MIN_SPEED, Stack
from .writeback import DESCRIPTION_NAME, DRIVE_NAME, drive_yaml, identified_urdf, URDF_NAME
from ..analysis import AnalysisError
from ..analysis.merge import DEFAULT_MAX_GAP
from ..drive import COULOMB_VELOCITY
from ..parsers.urdf import joint_limits

#: The differentiation windows identification chooses from [s] (:func:`choose_window`) where
#: the settings give none.
WINDOWS = (0.05, 0.1, 0.2, 0.4)
#: A longer window is taken only where its residual share is below the shorter one's by more
#: than this share of it: noise in the accelerations (what the window is for) makes large
#: differences, smoothing the motion's own sharp features (a friction's reversals) small ones.
WINDOW_TIE = 0.1


class Settings:
    """
    What to identify from, and how.

    Attributes
    ----------
    text, model
        the description's URDF text and its compiled model (every joint).
    bags
        the recordings to fit (rosbag2 directories or files).
    validate
        recordings to validate on; empty: the last fifth of the fitted data, held out.
    topic, max_gap
        how the joint states are read (the topic; pauses longer than ``max_gap`` sample
        periods split a recording).
    window
        the Savitzky-Golay window of the derivatives [s]; ``None``: :func:`choose_window`.
    holds
        ``{joint: position}`` held fixed (others that do not move are held too).
    root_link
        the model's root link ('' or ``None``: the URDF's).
    coulomb_velocity
        the width of Coulomb friction's smooth sign for every joint; ``None``: identified.
    min_speed
        samples of a joint slower than this are left out of the fit (a joint at rest sticks).
    effort_scale
        ``None`` (efforts in joint torques), ``{joint: scale}`` (joint torque per unit of the
        driver's effort), or ``'estimate'``.
    effort_scale_source
        where a given ``effort_scale`` comes from, for the notes written with the drive.
    loads
        with ``effort_scale='estimate'``: ``[(link, mass, bags)]``, recordings holding a load
        of known mass [kg] on ``link``.
    offset, armature
        identify an effort offset per joint, and armature.
    max_iterations, max_condition
        limits of the solve (``None``: :mod:`.fit`'s defaults).

    """

    def __init__(self, text, model, bags, validate=(), topic='/joint_states',
                 max_gap=DEFAULT_MAX_GAP, window=None, holds=None, root_link=None,
                 coulomb_velocity=None, min_speed=DEFAULT_MIN_SPEED, effort_scale=None,
                 effort_scale_source='', loads=(), offset=True, armature=True,
                 max_iterations=None, max_condition=None):
        self.text, self.model = text, model
        self.bags, self.validate = list(bags), list(validate)
        self.topic, self.max_gap, self.window = topic, max_gap, window
        self.holds = dict(holds or {})
        self.root_link = root_link
        self.coulomb_velocity = coulomb_velocity
        self.min_speed = min_speed
        self.effort_scale = effort_scale
        self.effort_scale_source = effort_scale_source
        self.loads = list(loads)
        self.offset, self.armature = offset, armature
        self.max_iterations, self.max_condition = max_iterations, max_condition

    @property
    def estimating(self):
        """Whether the effort scales are estimated."""
        return isinstance(self.effort_scale, str) and self.effort_scale == 'estimate'


class Result:
    """
    What :func:`identify` found.

    Attributes
    ----------
    described, model
        the description's model, and the one fitted (held joints fixed).
    identified_text, identified_model
        the identified description (new ``<inertial>`` elements) and its model (joints held
        as in ``model``).
    solution
        the :class:`~.fit.Identification`.
    stack, layout
        the stacked regressor and its columns.
    held
        the joints held (:class:`~.hold.Held`).
    window, windows
        the differentiation window [s]; each candidate's residual share where it was chosen
        (else ``None``).
    rows
        validation ``[(recording, description's efforts, identified efforts)]``.
    held_out
        which data validate, in words.
    every_speed, unconstrained
        the fitted rows at every speed, and the unconstrained fit's validation error.
    drive
        ``[joints, viscous, coulomb, armature, widths]`` for every joint of the description.
    effort_offset, effort_scale
        per joint of the description, or ``None``.
    scales, scale_fit
        ``{joint: scale}`` applied (or ``None``); the estimate, where estimated.
    notes, timing
        the lines written above the drive parameters (the files' comments); seconds per
        stage.

    """

    def files(self, plot_points):
        """
        Return the output files ``{name: text or writer}`` (``write_all``'s argument).

        ``identified.urdf``, ``drive.yaml``, ``description.yaml``, the validation's CSV and plot
        (``plot_points`` samples per curve at most).
        """
        joints = self.model.joint_names
        return {
            URDF_NAME: self.identified_text,
            DRIVE_NAME: drive_yaml(*self.drive, self.notes, effort_scale=self.effort_scale,
                                   effort_offset=self.effort_offset),
            DESCRIPTION_NAME: drive_yaml(*self.drive, self.notes + [
                'The identified description and drive: run the node with --params-file on this '
                'file alone.'], description=self.identified_text,
                effort_scale=self.effort_scale, effort_offset=self.effort_offset),
            CSV_NAME: lambda path: write_prediction_csv(path, joints, self.rows),
            PNG_NAME: lambda path: plot_predictions(path, joints, self.rows, plot_points)}

    def errors(self):
        """
        Return ``(description, identified)``: the validation error of each model.

        Each the RMS of measured minus predicted effort over every joint and state, as a share
        of the RMS effort (the figures of the command's summary).
        """
        errors = rms_errors(self.rows, self.model.nv)
        effort, before, after = (np.sqrt((e ** 2).sum()) for e in errors)
        return before / effort, after / effort

    def warnings(self):
        """Return what makes the identified model suspect, one line each (:func:`warnings`)."""
        scale = None if self.scales is None else np.array(
            [self.scales[name] for name in self.model.joint_names])
        return warnings(self.model, self.rows, scale)


def identify(settings, step=None, stack_progress=None):
    """
    Identify the links' inertial parameters and the drive from recordings (see the module).

    ``step(text)``, when given, is called as each stage starts (some take seconds);
    ``stack_progress(done, total)`` as the regressor is stacked.

    Raises
    ------
    AnalysisError
        unusable recordings or settings (the message says which).
    NotExcitedError
        the motion does not determine the base parameters.

    """
    step = step or (lambda text: None)
    s = settings
    out = Result()
    timing = out.timing = {}
    described = model = out.described = s.model
    if s.loads and not s.estimating:
        raise AnalysisError('loads of known mass fix the common factor of estimated effort '
                            'scales: estimate the scales to use them')
    step('reading %d recording%s' % (len(s.bags) + len(s.validate),
                                     '' if len(s.bags) + len(s.validate) == 1 else 's'))
    states = [read_states(b, s.topic, model, timing) for b in s.bags]
    checked = [read_states(b, s.topic, model, timing) for b in s.validate]
    held = out.held = hold.choose(model, joint_limits(s.text), states, s.holds)
    if len(held.values) == model.nv:
        raise NotExcitedError('no joint of the model moves in the recordings (%s)'
                              % '; '.join(held.summary()), model.joint_names)
    if held:
        model = held_model(s.text, held, s.root_link)
    out.model = model
    fixed = (set(described.joint_names) | set(described.mimic)) \
        - set(model.joint_names) - set(model.mimic)
    scales = dict(s.effort_scale) if isinstance(s.effort_scale, dict) else None
    window, out.windows = s.window, None
    if window is None:
        step('choosing the differentiation window')
        window, out.windows = choose_window(s, model, states, fixed, scales)
    out.window = window
    recordings = [recording(b, st, model, window, s.max_gap, timing, fixed)
                  for b, st in zip(s.bags, states)]
    if s.validate:
        fit = recordings
        validation = [recording(b, st, model, window, s.max_gap, timing, fixed)
                      for b, st in zip(s.validate, checked)]
        out.held_out = 'the validation recordings'
    else:
        fit, validation = split_holdout(recordings)
        out.held_out = 'the last fifth of the data, held out of the fit'
    # the rows to fit: a joint at rest sticks (its effort says nothing of the model, nor of
    # its scale); they depend on the motion only, not on the efforts' unit
    keep, out.every_speed = fitted_rows(model, fit, s.min_speed, window)
    out.scale_fit = None
    if s.estimating:
        step('estimating the effort scales')
        loads = [(link, mass, [recording(b, read_states(b, s.topic, described, timing), model,
                                         window, s.max_gap, timing, fixed) for b in bags])
                 for link, mass, bags in s.loads]
        t0 = time.perf_counter()
        layout0 = Layout(model, s.coulomb_velocity or COULOMB_VELOCITY, offset=s.offset,
                         armature=s.armature)
        rows = {id(r): k for r, k in zip(fit, keep)}
        for _, _, parts in loads:
            rows.update(zip(map(id, parts), fitted_rows(model, parts, s.min_speed, window)[0]))
        out.scale_fit = estimate_scales(layout0, fit, loads, lambda r: rows[id(r)])
        timing['effort scales'] = time.perf_counter() - t0
        scales = dict(zip(model.joint_names, out.scale_fit.scale))
    out.scales = scales
    if scales is not None:
        missing = [n for n in model.joint_names if n not in scales]
        if missing:
            raise AnalysisError('%s gives no scale for %s'
                                % (s.effort_scale_source or 'the effort scale',
                                   ', '.join(missing)))
        scale = np.array([scales[n] for n in model.joint_names])
        for r in fit + validation:
            r.effort = r.effort * scale  # the driver's units -> joint torques
    t0 = time.perf_counter()
    widths = s.coulomb_velocity
    if widths is None:
        step("identifying the friction width of each joint (a machine's first run also "
             'compiles its kernels: about a minute)')
        with blas_threads(1):
            widths = recording_widths(model, fit, s.offset, s.armature)
        timing['friction widths'] = time.perf_counter() - t0
        t0 = time.perf_counter()
    layout = out.layout = Layout(model, widths, offset=s.offset, armature=s.armature)
    stack = out.stack = Stack(layout)
    total, done = sum(len(r) for r in fit), 0
    with blas_threads(1):
        for r, k in zip(fit, keep):
            chunk = None if stack_progress is None else (
                lambda count, _, before=done: stack_progress(before + count, total))
            stack.add(r.q, r.qd, r.qdd, r.effort, progress=chunk, keep=k)
            done += len(r)
    # the regressor's own time, and the rest of stacking (folding into the factors)
    timing['regressor'] = stack.timing['regressor']
    timing['stacking'] = time.perf_counter() - t0 - stack.timing['regressor']
    t0 = time.perf_counter()
    options = {} if s.max_condition is None else {'max_condition': s.max_condition}
    if s.max_iterations is not None:
        options['max_iterations'] = s.max_iterations
    step('solving for the physically consistent parameters')
    with blas_threads(1):
        try:
            solution = out.solution = solve(stack, **options)
        except NotExcitedError as err:
            left_out = 1 - stack.fitted.sum() / max(stack.samples * model.nv, 1)
            if left_out > 0.05:
                raise NotExcitedError(
                    '%s (the minimum speed %g left %.0f %% of the joint samples out of the '
                    'fit; a lower one keeps more)' % (err, s.min_speed, 100 * left_out),
                    err.joints, err.condition) from None
            raise
    from ..model import Model
    text_out = out.identified_text = identified_urdf(s.text, solution.own_link_parameters())
    identified_model = out.identified_model = Model.from_urdf(
        hold.held_description(text_out, held.values) if held else text_out,
        root_link=s.root_link or None, compiled=False)
    identified_model.compile()
    timing['solving'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    step('validating the identified model')
    out.rows = [(r,) + tuple(predictions(model, identified_model, solution, r))
                for r in validation]
    out.unconstrained = unconstrained_error(solution, validation)
    timing['validation'] = time.perf_counter() - t0
    out.notes = ['Drive identified by python -m rbd_dynamics identify from %s.'
                 % ', '.join(os.path.basename(b.rstrip('/')) for b in s.bags)]
    out.effort_offset = None
    if s.offset:
        out.notes.append('drive.effort_offset: the bias of the measured efforts (a sensor '
                         'nuisance); the node takes it off them before the contact observer.')
        index = {name: j for j, name in enumerate(model.joint_names)}
        out.effort_offset = [float(solution.drive['offset'][index[name]]) if name in index
                             else 0.0 for name in described.joint_names]
    out.drive = every_joint(described, model, solution.drive, layout.coulomb_velocity)
    out.effort_scale = None
    if scales is not None:
        out.notes.append("Efforts in the driver's units: drive.effort_scale %s."
                         % ('estimated (the common factor from %s)' % (
                             'the loads of known mass' if s.loads else "the description's "
                             'inertial parameters') if s.estimating
                            else 'from %s' % (s.effort_scale_source or 'the settings')))
        out.effort_scale = [scales.get(name, 1.0) for name in described.joint_names]
    return out


def choose_window(settings, model, states, fixed, scales):
    """
    Return the differentiation window of :data:`WINDOWS` to identify with, and each one's share.

    Velocities and accelerations come from the positions (and measured velocities) through a
    Savitzky-Golay window: too short, their noise enters the regressor, and least squares,
    which takes the regressor as exact, trades physical parameters for it (errors in
    variables); too long, it smooths the motion itself. Each window's states are fitted by plain
    least squares on the rows every window fits (a longer window leaves more of the slow rows
    out; the validation data untouched), and the shortest window whose fit leaves a residual
    share within :data:`WINDOW_TIE` of the least is taken (states without noise fit alike at
    any window: then the shortest, which smooths the motion least).
    """
    s = settings
    fits, keeps = {}, {}
    for window in WINDOWS:
        parts = [recording(b, st, model, window, s.max_gap, None, fixed, quiet=True)
                 for b, st in zip(s.bags, states)]
        fits[window] = parts if s.validate else split_holdout(parts)[0]
        keeps[window] = fitted_rows(model, fits[window], s.min_speed, window)[0]
    common = [np.logical_and.reduce([keeps[w][k] for w in WINDOWS])
              for k in range(len(keeps[WINDOWS[0]]))]
    scale = None if scales is None else np.array([scales.get(n, 1.0)
                                                  for n in model.joint_names])
    shares = {}
    for window in WINDOWS:
        layout = Layout(model, s.coulomb_velocity or COULOMB_VELOCITY, offset=s.offset,
                        armature=s.armature)
        stack = Stack(layout)
        with blas_threads(1):
            for r, k in zip(fits[window], common):
                stack.add(r.q, r.qd, r.qdd, r.effort if scale is None else r.effort * scale,
                          keep=k)
        shares[window] = residual_share(stack)
    least = min(shares.values())
    return min(w for w in WINDOWS if shares[w] <= (1.0 + WINDOW_TIE) * least), shares


def warnings(model, rows, scale=None):
    """
    Return what makes the written model suspect, one line each (none: nothing).

    Validation rows ``(recording, description, identified)``; ``scale`` ``(nv,)`` the effort
    scale the efforts were converted by, or ``None``. Said: a joint whose converted efforts the
    identified model predicts worse (a share of their RMS) than the description predicts the
    unconverted ones (a wrong scale, or sign: the fit cannot follow it), and an identified model
    that predicts the validation data worse than the description.
    """
    lines = []
    effort, before, after = rms_errors(rows, model.nv)
    if scale is not None:
        sums = np.zeros((2, model.nv))
        for r, nominal, _ in rows:
            raw = r.effort / scale
            sums += ((raw - nominal) ** 2).sum(axis=0), (raw ** 2).sum(axis=0)
        raw_error, raw_effort = np.sqrt(sums)
        for j, name in enumerate(model.joint_names):
            fitted = after[j] / effort[j] if effort[j] > 0 else 0.0
            described = raw_error[j] / raw_effort[j] if raw_effort[j] > 0 else np.inf
            if scale[j] != 1.0 and fitted > described:
                lines.append(
                    '%s: converted by its scale %.6g, its efforts are predicted to %.1f %% by '
                    'the identified model, where the description predicts them unconverted to '
                    '%.1f %%: is the scale (and its sign) right? An effort already in N m (or '
                    'N) takes the scale 1' % (name, scale[j], 100 * fitted, 100 * described))
    total, before, after = (np.sqrt((e ** 2).sum()) for e in (effort, before, after))
    if total > 0 and after > before:
        lines.append('the identified model predicts the validation data worse than the '
                     'description (%.1f %% against %.1f %% of the RMS effort): check the units '
                     'of the efforts (the effort scales) and the recordings before using it'
                     % (100 * after / total, 100 * before / total))
    return lines


def every_joint(described, fitted, drive, widths):
    """
    Return ``[joints, viscous, coulomb, armature, widths]`` for every joint of the description.

    The fitted model's joints take the identified values; a held joint (not in ``fitted``)
    keeps the description's friction, the node's default width and no armature, so the node
    still gives it a torque.
    """
    index = {name: j for j, name in enumerate(fitted.joint_names)}
    out = [described.joint_names]
    for values, default in ((drive['viscous'], described.damping),
                            (drive['coulomb'], described.friction),
                            (drive['armature'], np.zeros(described.nv)),
                            (np.broadcast_to(widths, (fitted.nv,)),
                             np.full(described.nv, COULOMB_VELOCITY))):
        out.append([float(values[index[name]]) if name in index else float(default[j])
                    for j, name in enumerate(described.joint_names)])
    return out
