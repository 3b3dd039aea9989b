"""
The package's layout holds: imports run only down the layers, no private name crosses a module.

The layers, from the ground up, are those of docs/design.md ("The layers"); a module may import
from its own room and from the layers below it, never from a room beside it or above it. A
name that starts with one underscore (a function, a class, a module-level value, an attribute)
is used only in the module that defines it. Both are read from the sources with :mod:`ast`,
imports inside functions included.
"""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, 'rbd_dynamics')

#: The rooms of the package by layer, from the ground up: a room is a module of the package's
#: top level or one of its subpackages; ``__init__`` is the package's face (``import
#: rbd_dynamics``), which gathers the library's public names from the rooms below it.
LAYERS = (
    ('spatial', 'drive', 'numerics', 'resources'),
    ('joints', 'compiled'),
    ('parsers', 'dynamics', 'dispatch', 'runtime'),
    ('tree',),
    ('model', 'crba', 'coriolis', 'jacobians', 'regressors'),
    ('eom',),
    ('frames', 'precompile'),
    ('floating',),
    ('__init__',),
    ('control',),
    ('analysis', 'sim'),
    ('world',),
    ('identification',),
    ('excitation',),
    ('ros', 'cli'),
    ('__main__',),
)
LAYER = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}

#: Private names of other projects that the package uses on purpose, with the reason.
FOREIGN = {
    '_getframe',  # sys._getframe: the caller's frame, for the warnings' stack level
    '_fields_and_field_types',  # rosidl messages: the fields of a message class
    '_base_executable',  # sys._base_executable: the interpreter a venv was made from
    '_exit',  # os._exit: leave at once, without the interpreter's teardown
    '_fields',  # a named tuple's field names (collections.namedtuple's public API)
    '_getvalue',  # numba's code generation: the LLVM value of an array structure
    '_replace',  # a named tuple with one field changed (collections.namedtuple's public API)
}


def _modules():
    """Yield ``(dotted name, path)`` of every module of the package."""
    if not os.path.isdir(PACKAGE):
        pytest.skip('not a checkout (no rbd_dynamics/ beside test/)')
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
                if parts[-1] == '__init__':
                    parts = parts[:-1]
                yield '.'.join(parts), path


def _tree(path):
    with open(path) as stream:
        return ast.parse(stream.read(), path)


def _is_package(path):
    return os.path.basename(path) == '__init__.py'


def _imported(module, path, node):
    """Return the package's modules that an import node names (resolved, dotted)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split('.')[0] == 'rbd_dynamics']
    base = module.split('.')
    if node.level:
        base = base[:len(base) - node.level + (1 if _is_package(path) else 0)]
        target = base + (node.module.split('.') if node.module else [])
    else:
        target = (node.module or '').split('.')
    if target[0] != 'rbd_dynamics':
        return []
    dotted = '.'.join(target)
    # `from . import name` may import a submodule: count it as that module
    return [dotted + '.' + alias.name if os.path.exists(_path_of(dotted + '.' + alias.name))
            else dotted for alias in node.names]


def _path_of(dotted):
    base = os.path.join(ROOT, *dotted.split('.'))
    return base + '.py' if os.path.exists(base + '.py') else os.path.join(base, '__init__.py')


def _room(dotted):
    parts = dotted.split('.')
    return parts[1] if len(parts) > 1 else '__init__'


def _upward_imports():
    found = []
    for module, path in _modules():
        room = _room(module)
        assert room in LAYER, '%s is in no layer of LAYERS (and docs/design.md)' % module
        for node in ast.walk(_tree(path)):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(module, path, node):
                other = _room(target)
                if other == room:
                    continue
                if LAYER[other] >= LAYER[room]:
                    found.append('%s:%d imports %s (layer %d from layer %d)'
                                 % (module, node.lineno, target, LAYER[other], LAYER[room]))
    return found


def _private(name):
    return name.startswith('_') and not name.startswith('__')


def _defined(tree):
    """Return the private names a module defines: functions, classes, values, attributes."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and
                                                  t.id == '__slots__' for t in node.targets):
            names.update(c.value for c in ast.walk(node.value)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if _private(name)}


def _private_uses(path):
    """Private names a module uses without defining them: ``['line: name', ...]``."""
    tree = _tree(path)
    own = _defined(tree) | FOREIGN
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += ['%d: from %s import %s' % (node.lineno, node.module, alias.name)
                      for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            found.append('%d: .%s' % (node.lineno, node.attr))
    return found


def test_imports_run_only_down_the_layers():
    assert not _upward_imports()


def test_no_private_name_crosses_a_module():
    used = {module: uses for module, path in _modules() for uses in [_private_uses(path)]
            if uses}
    assert not used, used


def test_the_checks_find_what_they_look_for(tmp_path, monkeypatch):
    """The checks themselves: an upward import and a private name of another module are found."""
    path = tmp_path / 'reaching.py'
    path.write_text('from rbd_dynamics.compiled.packed import _something\n'
                    'from rbd_dynamics import model\n'
                    'model._listing([])\n'
                    'class A:\n'
                    '    def __init__(self):\n'
                    '        self._own = 1\n'
                    '        print(self._own)\n')
    assert [use.split(': ')[1] for use in _private_uses(str(path))] == \
        ['from rbd_dynamics.compiled.packed import _something', '._listing']
    tree = ast.parse('from ..ros import node\nfrom .. import frames, Model\n')
    module = 'rbd_dynamics.analysis.robot'
    where = os.path.join(PACKAGE, 'analysis', 'robot.py')
    assert [_imported(module, where, node) for node in tree.body] == \
        [['rbd_dynamics.ros.node'], ['rbd_dynamics.frames', 'rbd_dynamics']]


def test_the_design_document_draws_these_layers():
    """docs/design.md lists the rooms of each layer in this order (top first)."""
    path = os.path.join(ROOT, 'docs', 'design.md')
    if not os.path.exists(path):
        pytest.skip('not a checkout (no docs/)')
    with open(path) as stream:
        text = stream.read()
    section = text.split('## The layers', 1)[1].split('\n## ', 1)[0]
    rows = [re.findall(r'`([\w/.]+?)(?:/|\.py)?`', line.split('|')[2])
            for line in section.splitlines() if re.match(r'\| *\d+ *\|', line)]
    assert rows == [list(rooms) for rooms in reversed(LAYERS)]
