"""
Compile the kernels ahead of time, so that a robot's first start is warm.

    python -m rbd_dynamics precompile

compiles every kernel the node and the tools use (the single-state kernels and the batch
kernel of the RNEA, then those of the equations of motion, which a model compiles only when
it first needs them) into numba's on-disk cache and says where that cache is. Later processes
load them in a fraction of a second instead of compiling for seconds. The kernels do not depend
on the robot: one compilation serves every model.

Where numba keeps them, in order: ``$NUMBA_CACHE_DIR`` when it is set; else ``__pycache__``
beside the installed ``rbd_dynamics/compiled/`` modules when that directory is writable; else a
cache directory in the user's home. A process that runs as another user, or with another
``NUMBA_CACHE_DIR``, looks elsewhere: precompile the way the robot will run (docs/performance.md
has the line for a Dockerfile and for a colcon install).
"""

import sys
import threading
import time

#: What a program prints when it waits for the kernels (a first run compiles them).
COMPILING = 'compiling kernels (first run only; later runs load them from the cache)'


class CompileProgress:
    """
    Show a compilation's progress on a stream, once one step has taken ``delay`` seconds.

    Use it as ``model.compile(progress=CompileProgress())``: loaded from numba's cache, every
    kernel is ready well before ``delay`` and nothing is shown, however many there are (a warm
    start on a busy machine stays silent); compiling one takes seconds, and then a line says so
    and each step follows.
    """

    def __init__(self, stream=None, delay=1.0):
        self.stream = sys.stderr if stream is None else stream
        self.started = time.monotonic()
        self.step = None
        self.shown = False
        self.delay = delay
        self._lock = threading.Lock()
        self._timer = None
        if delay > 0.0:
            self._restart()
        else:
            self._show()

    def _restart(self):
        """Time the current step from now (under the lock, or before any thread runs)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self.delay, self._show)
        self._timer.daemon = True
        self._timer.start()

    def _show(self):
        with self._lock:
            if not self.shown:
                self.shown = True
                self._write(COMPILING)
                if self.step is not None:
                    self._write_step()

    def _write(self, text):
        self.stream.write(text + '\n')
        self.stream.flush()

    def _write_step(self):
        name, done, total = self.step
        spent = time.monotonic() - self.started
        self._write('  %s (%d of %d), %.1f s' % (name, done + 1, total, spent))

    def __call__(self, name, done, total):
        with self._lock:
            self.step = (name, done, total)
            if self.shown:
                self._write_step()
            elif self.delay > 0.0:
                self._restart()

    def finish(self):
        """Stop the timer; return the seconds since the start."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        return time.monotonic() - self.started


#: How precompile shares the compilation out between itself and a process running beside it
#: (numba keeps each kernel in files of its own, so they do not meet): the RNEA's kernels with
#: the regressor, the link frames and the floating base here, and the rest of the equations of
#: motion with the task-space law in the other process, about half of the work each. The batch
#: kernel, the task-space law and the floating base call the single-state entry points
#: (:data:`rbd_dynamics.compiled.warm_up.CALLS`) and come last in their process, when it (or,
#: for the floating base's Jacobian, the other one, which builds it second) has cached the ones
#: they need.
HERE, BESIDE = ('regressor', 'link_pose', 'link_acceleration', 'rnea', 'floating_base'), \
    ('mass_matrix', 'jacobian', 'coriolis_matrix', 'eom_batch', 'task_law')


def _worker():
    """Compile :data:`BESIDE` into the cache, naming each step on stdout."""
    from . import compiled
    from .model import Model
    from .resources import demo_urdf_path
    model = Model.from_urdf_file(demo_urdf_path(), compiled=False)

    def step(name, done, total):
        print('step %s' % name, flush=True)

    try:
        if not compiled.prepare(model, BESIDE, step):
            return 1
    except Exception as exc:  # a numba that cannot build them: the parent says so
        print('%s: %s' % (type(exc).__name__, exc), file=sys.stderr)
        return 1
    return 0


def _compile_side_by_side(model, progress):
    """
    Compile :data:`HERE` for ``model`` while a process beside fills the cache with the rest.

    Reports every step, both processes', to ``progress``. Returns the names of the kernels
    compiled here (:func:`rbd_dynamics.compiled.compiled_here`); a failure only costs time
    (the caller compiles what is missing itself).
    """
    import subprocess
    from . import compiled
    total = len(compiled.steps())
    done = []
    lock = threading.Lock()

    def report(name, _done=0, _total=0):
        with lock:
            progress(name, len(done), total)
            done.append(name)

    def follow(process):
        for line in process.stdout:
            if line.startswith('step '):
                report(line[5:].strip())

    try:
        process = subprocess.Popen([sys.executable, '-m', 'rbd_dynamics', 'precompile',
                                    '--worker'], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
    except OSError:
        process = None
    reader = None
    if process is not None:
        reader = threading.Thread(target=follow, args=(process,), daemon=True)
        reader.start()
    try:
        compiled.prepare(model, HERE, report)
    except Exception:  # (the caller compiles what is missing, with the usual messages)
        pass
    own = compiled.compiled_here()
    if process is not None:
        process.wait()
        reader.join()
    return own


def numba_version():
    import numba
    return numba.__version__


def main(argv=()):
    """Run ``python -m rbd_dynamics precompile``; return the exit code."""
    import argparse
    parser = argparse.ArgumentParser(prog='python -m rbd_dynamics precompile',
                                     description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    from . import compiled
    if not compiled.AVAILABLE:
        print('precompile: nothing to compile: %s' % compiled.UNAVAILABLE_REASON,
              file=sys.stderr)
        return 1
    if args.worker:
        return _worker()
    from .model import Model
    from .resources import demo_urdf_path
    progress = CompileProgress(sys.stdout, delay=0.5)
    model = Model.from_urdf_file(demo_urdf_path(), compiled=False)
    own = ()
    if compiled.EOM_AVAILABLE:
        own = _compile_side_by_side(model, progress)
    else:
        print('precompile: numba %s runs the equations of motion in NumPy (they are compiled '
              'from numba %d.%d on); compiling the RNEA'
              % ((numba_version(),) + compiled.EOM_MIN_NUMBA), flush=True)
    # Then every kernel here: loaded from the cache the process beside filled, or, where it
    # could not (a numba without an on-disk cache, a failure), compiled here with the usual
    # messages.
    ready = model.compile(progress=None if compiled.EOM_AVAILABLE else progress)
    if ready and compiled.EOM_AVAILABLE:
        try:
            compiled.prepare(model, compiled.KERNELS[1:])
        except Exception as exc:  # a numba that cannot build them: the NumPy path serves
            print('precompile: the equations of motion could not be compiled (%s: %s)'
                  % (type(exc).__name__, exc), file=sys.stderr)
            ready = False
    spent = progress.finish()
    missed = [name for name in compiled.compiled_here() if name not in own]
    if ready and missed and compiled.cache_directory() and compiled.EOM_AVAILABLE:
        # works, only slower: say what the process beside left out
        print('precompile: %s compiled in this process, not side by side'
              % ', '.join(missed), file=sys.stderr)
    if not ready:
        print('precompile: the kernels could not be built (see the warning above)',
              file=sys.stderr)
        return 1
    print('kernels ready in %.1f s; numba cache: %s'
          % (spent, compiled.cache_directory() or 'unknown'))
    return 0
