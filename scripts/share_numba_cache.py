"""
Give a second copy of the package the compiled kernels of a first one.

Usage, with the first environment's Python::

    .venv/bin/python scripts/share_numba_cache.py TARGET_PYTHON [TARGET_PYTHONPATH]

The second copy is the one ``TARGET_PYTHON`` imports, with ``TARGET_PYTHONPATH`` (where given)
first on its path: CI's Kilted environment (``.venv-kilted/bin/python``), or a colcon
workspace's install space run by the first environment's Python
(``scripts/colcon_check.sh``).

numba keys its on-disk cache on its own version, on the compiled function's code and on the
modification time and size of the function's source file. Where numba, llvmlite, NumPy, Python
and the package's kernel sources are the same in both environments, the cache files are copied
and the second environment's kernel sources get the first's modification times: numba there
loads the kernels instead of compiling them again (about 30 s of one core for Kilted in CI,
and some 100 s for the tests colcon runs on a new install space). Where
anything differs, nothing is copied and the second environment compiles as usual; numba checks
every entry it loads itself. Always exits 0: sharing is an optimisation, never a reason to
fail.
"""

import json
import os
import shutil
import subprocess
import sys


def describe():
    """Return what decides whether a cache carries over: versions, sources, cache directory."""
    import llvmlite
    import numba
    import numpy
    from rbd_dynamics import compiled
    sources = os.path.dirname(os.path.abspath(compiled.__file__))
    return {'numba': numba.__version__, 'llvmlite': llvmlite.__version__,
            'numpy': numpy.__version__, 'python': list(sys.version_info[:2]),
            'sources': sources, 'cache': compiled.cache_directory()}


def _sources(directory):
    return sorted(name for name in os.listdir(directory) if name.endswith('.py'))


def _same_file(a, b):
    with open(a, 'rb') as fa, open(b, 'rb') as fb:
        return fa.read() == fb.read()


def share(target_python, target_path=''):
    """Copy this environment's kernel cache to ``target_python``'s; return what was done."""
    here = describe()
    env = dict(os.environ)
    if target_path:
        env['PYTHONPATH'] = os.pathsep.join(p for p in (target_path, env.get('PYTHONPATH'))
                                            if p)
    there = json.loads(subprocess.run([target_python, os.path.abspath(__file__), '--describe'],
                                      check=True, capture_output=True, text=True,
                                      env=env).stdout)
    if here['sources'] == there['sources']:
        return 'not shared: the same copy of the package'
    for key in ('numba', 'llvmlite', 'numpy', 'python'):
        if here[key] != there[key]:
            return 'not shared: %s %s here, %s there' % (key, here[key], there[key])
    if not (here['cache'] and there['cache'] and os.path.isdir(here['cache'])):
        return 'not shared: no numba cache directory to copy'
    names = _sources(here['sources'])
    if names != _sources(there['sources']) or not all(
            _same_file(os.path.join(here['sources'], n), os.path.join(there['sources'], n))
            for n in names):
        return 'not shared: the kernel sources differ'
    os.makedirs(there['cache'], exist_ok=True)
    copied = 0
    for name in os.listdir(here['cache']):
        if name.endswith(('.nbi', '.nbc')):
            shutil.copyfile(os.path.join(here['cache'], name), os.path.join(there['cache'], name))
            copied += 1
    for name in names:
        stat = os.stat(os.path.join(here['sources'], name))
        os.utime(os.path.join(there['sources'], name), ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return 'shared: %d numba cache files from %s to %s' % (copied, here['cache'], there['cache'])


def main(argv):
    if argv[1:] == ['--describe']:
        print(json.dumps(describe()))
        return 0
    if len(argv) not in (2, 3):
        print('usage: share_numba_cache.py TARGET_PYTHON [TARGET_PYTHONPATH]', file=sys.stderr)
        return 0
    try:
        print('[kernels] %s' % share(*argv[1:]))
    except Exception as exc:  # never a reason to fail: the target compiles instead
        print('[kernels] not shared: %s: %s' % (type(exc).__name__, exc))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
