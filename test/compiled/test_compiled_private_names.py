"""
Nothing outside :mod:`rbd_dynamics.compiled` reaches into its private names.

The node, ``precompile``, the tools, the tests and the benchmarks use its public entry
(:func:`~rbd_dynamics.compiled.prepare`, :func:`~rbd_dynamics.compiled.ready`, the public names
of its modules). Read from the sources with :mod:`ast`: an import of a name starting with
``_`` from the package or one of its modules, or such an attribute of a name bound to one.
"""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, 'rbd_dynamics', 'compiled')


def _sources():
    for top in ('rbd_dynamics', 'test', 'benchmarks', 'scripts', 'launch', 'docs'):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            if folder.startswith(PACKAGE):
                continue
            for name in files:
                if name.endswith('.py'):
                    yield os.path.join(folder, name)


def _compiled_module(name):
    return name is not None and (name == 'compiled' or name.endswith('.compiled')
                                 or '.compiled.' in name or name.startswith('compiled.'))


def _private_uses(path):
    with open(path) as stream:
        tree = ast.parse(stream.read(), path)
    bound = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = ('.' * node.level) + (node.module or '')
            if _compiled_module(module.lstrip('.')) or (module.lstrip('.') in ('', 'rbd_dynamics')
                                                        and any(a.name == 'compiled'
                                                                for a in node.names)):
                for alias in node.names:
                    if alias.name.startswith('_'):
                        found.append('%d: from %s import %s' % (node.lineno, module,
                                                                alias.name))
                    bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _compiled_module(alias.name):
                    bound.add(alias.asname or alias.name.split('.')[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith('_') and \
                not node.attr.startswith('__') and isinstance(node.value, ast.Name) and \
                node.value.id in bound:
            found.append('%d: %s.%s' % (node.lineno, node.value.id, node.attr))
    return found


def test_no_private_name_of_the_compiled_package_is_used_outside_it():
    used = {os.path.relpath(path, ROOT): uses for path in _sources()
            for uses in [_private_uses(path)] if uses}
    assert not used, used


def test_the_check_finds_a_private_name(tmp_path):
    """The check itself: a module that does reach in is found."""
    path = tmp_path / 'reaching_in.py'
    path.write_text('from rbd_dynamics.compiled import rnea\n'
                    'from rbd_dynamics.compiled.packed import _something\n'
                    'rnea._rnea_state\n')
    assert len(_private_uses(str(path))) == 2


def test_the_old_module_is_gone():
    assert not os.path.exists(os.path.join(ROOT, 'rbd_dynamics', '_fast.py'))
