"""The node parameters file: what is written reads back as it was, and is written whole."""

import os

import pytest

yaml = pytest.importorskip('yaml')

from rbd_dynamics.analysis import AnalysisError  # noqa: E402
from rbd_dynamics.analysis.parameters_file import Block, flat_parameters, \
    parameters_text, read_parameters, write_parameters  # noqa: E402


def test_what_is_written_reads_back(tmp_path):
    params = {'root_link': 'base', 'robot_description': Block('  <robot name="r">\n\n</robot>\n'),
              'joints': ['a', 'b"c'], 'n': 3, 'use_sim_time': True,
              'drive': {'viscous': [0.5, 1e-05], 'effort_scale': [1.0, -2.0]}}
    path = str(tmp_path / 'params.yaml')
    write_parameters(path, params, ['a note: with a colon'])
    assert os.listdir(str(tmp_path)) == ['params.yaml']  # no temporary left
    text = open(path).read()
    assert text.startswith('# a note: with a colon\n/**:\n  ros__parameters:\n')
    assert '1.0e-05' in text
    back = read_parameters(path)
    assert back['robot_description'] == '  <robot name="r">\n\n</robot>\n'
    assert back['drive'] == {'viscous': [0.5, 1e-05], 'effort_scale': [1.0, -2.0]}
    assert back['joints'] == ['a', 'b"c'] and back['n'] == 3 and back['use_sim_time'] is True
    flat = flat_parameters(path)
    assert flat['drive.viscous'] == [0.5, 1e-05] and flat['root_link'] == 'base'


def test_any_node_key_and_plain_mappings(tmp_path):
    path = tmp_path / 'params.yaml'
    assert parameters_text({}, node='rbd_dynamics') == 'rbd_dynamics:\n  ros__parameters: {}\n'
    path.write_text('rbd_dynamics:\n  ros__parameters:\n    drive: {viscous: [1.0]}\n')
    assert flat_parameters(str(path)) == {'drive.viscous': [1.0]}
    path.write_text('drive.viscous: [2.0]\n')
    assert read_parameters(str(path)) == {'drive.viscous': [2.0]}
    path.write_text('- a list\n')
    with pytest.raises(AnalysisError, match='expected a node parameters file'):
        flat_parameters(str(path))


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text('old\n')
    with pytest.raises(UnicodeEncodeError):  # fails halfway, in the temporary file
        write_parameters(str(path), {'a': 1, 'b': Block('\ud800')})
    assert path.read_text() == 'old\n'
    assert os.listdir(str(tmp_path)) == ['params.yaml']
