"""
A generated corpus of unusable robot descriptions, each with the word its error must name.

Every case is a small valid robot broken in one way, or an attack on the XML parser. Used by the
library tests (each raises ``rbd.UrdfError`` naming the element) and by the node tests (each is
refused over the description topic while the last good model stays in use).
"""

import math

GOOD_LINKS = ('base', 'upper', 'lower', 'hand')


def link(name, mass='1.0', xyz='0 0 0.1', rpy='0 0 0', inertia=None):
    tensor = inertia or {'ixx': '0.01', 'iyy': '0.01', 'izz': '0.01',
                         'ixy': '0', 'ixz': '0', 'iyz': '0'}
    attrs = ' '.join('%s="%s"' % item for item in tensor.items())
    return ('<link name="%s"><inertial><origin xyz="%s" rpy="%s"/><mass value="%s"/>'
            '<inertia %s/></inertial></link>' % (name, xyz, rpy, mass, attrs))


def joint(name, parent, child, jtype='revolute', xyz='0 0 0.2', rpy='0 0 0', axis='0 1 0',
          extra=''):
    return ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
            '<origin xyz="%s" rpy="%s"/><axis xyz="%s"/>'
            '<limit effort="10" velocity="1" lower="-3" upper="3"/>%s</joint>'
            % (name, jtype, parent, child, xyz, rpy, axis, extra))


def robot(body):
    return '<?xml version="1.0"?>\n<robot name="hostile">%s</robot>' % body


def valid(**override):
    """Return the three-joint robot that every case breaks, pieces replaced by ``override``."""
    parts = {
        'base': link('base'), 'upper': link('upper'), 'lower': link('lower'),
        'hand': link('hand'),
        'j1': joint('j1', 'base', 'upper'), 'j2': joint('j2', 'upper', 'lower'),
        'j3': joint('j3', 'lower', 'hand', 'fixed'),
    }
    parts.update(override)
    return robot(''.join(v for v in parts.values() if v))


def cases():
    """
    Return the hostile descriptions, each with the words its error must contain.

    ``[(case id, description text, words the error must contain)]``: for XML that is
    not well-formed, the words of expat's message.
    """
    out = []
    add = out.append
    # not XML, or not a robot
    add(('empty', '', 'empty'))
    add(('bom_only', '\ufeff', 'empty'))
    add(('comment_only', '<!-- robot -->', 'no element found'))
    add(('whitespace', '   \n ', 'empty'))
    add(('not_xml', 'this is not xml', 'syntax error'))
    add(('truncated', valid()[:len(valid()) // 2], 'unclosed token'))
    add(('binary', '\x00\x01\x02robot', 'invalid token'))
    add(('not_robot', '<?xml version="1.0"?><world name="w"/>', 'robot'))
    add(('json', '{"robot": {"name": "x"}}', 'invalid token'))
    add(('unclosed_tag', '<robot name="x"><link name="a">', 'no element found'))
    add(('two_documents', valid() + valid().split('\n', 1)[1], 'junk after document'))
    add(('no_links', robot(''), 'link'))
    # attacks on the parser
    add(('billion_laughs', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
         + ''.join('<!ENTITY %s "%s">' % (chr(98 + i), ('&%s;' % chr(97 + i)) * 10)
                   for i in range(9))
         + ']><robot name="&j;"/>', 'entit'))
    add(('quadratic_blowup', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "%s">]><robot '
         'name="x">%s</robot>' % ('x' * 50000, '&a;' * 50000), 'entit'))
    add(('external_entity', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM '
         '"file:///etc/passwd">]><robot name="&e;"/>', 'entit'))
    add(('parameter_entity', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p "x">]>'
         '<robot name="x"/>', 'entit'))
    add(('deep_nesting', '<robot name="x">' + '<a>' * 100000 + '</a>' * 100000 + '</robot>',
         'nest'))
    add(('oversize', robot('<!--%s-->' % ('x' * (9 * 1024 * 1024)) + link('base')), 'bytes'))
    # tree structure
    add(('two_roots', valid(j1=''), 'root'))
    add(('cycle', valid(j1=joint('j1', 'hand', 'upper'), j3=joint('j3', 'lower', 'hand')),
         'cycle'))
    add(('self_loop', valid(j1=joint('j1', 'upper', 'upper')), 'upper'))
    add(('missing_parent', valid(j2=joint('j2', 'nowhere', 'lower')), 'nowhere'))
    add(('missing_child', valid(j2=joint('j2', 'upper', 'ghost')), 'ghost'))
    add(('two_parents', valid(j3=joint('j3', 'upper', 'lower')), 'lower'))
    add(('duplicate_link', valid(extra=link('upper')), 'upper'))
    add(('duplicate_joint', valid(j3=joint('j2', 'lower', 'hand')), 'j2'))
    add(('link_without_name', valid(hand='<link/>'), 'link'))
    add(('joint_without_type', valid(j2='<joint name="j2"><parent link="upper"/><child '
                                     'link="lower"/></joint>'), 'j2'))
    add(('joint_without_parent', valid(j2='<joint name="j2" type="revolute"><child '
                                       'link="lower"/></joint>'), 'j2'))
    add(('unknown_type', valid(j2=joint('j2', 'upper', 'lower', 'telescopic')), 'telescopic'))
    add(('root_link_missing', valid(), 'root_link'))
    # numbers
    for case, value in (('negative_mass', '-1'), ('nan_mass', 'nan'), ('inf_mass', 'inf'),
                        ('text_mass', 'heavy'), ('empty_mass', '')):
        add((case, valid(lower=link('lower', mass=value)), 'lower'))
    for key in ('ixx', 'iyy', 'izz', 'ixy'):
        tensor = {'ixx': '0.01', 'iyy': '0.01', 'izz': '0.01', 'ixy': '0', 'ixz': '0', 'iyz': '0'}
        tensor[key] = 'nan'
        add(('nan_%s' % key, valid(lower=link('lower', inertia=tensor)), 'lower'))
    tensor = {'ixx': '-0.01', 'iyy': '0.01', 'izz': '0.01', 'ixy': '0', 'ixz': '0', 'iyz': '0'}
    add(('negative_ixx', valid(lower=link('lower', inertia=tensor)), 'lower'))
    add(('inf_com', valid(lower=link('lower', xyz='0 inf 0')), 'lower'))
    add(('short_com', valid(lower=link('lower', xyz='0 0')), 'lower'))
    add(('nan_inertial_rpy', valid(lower=link('lower', rpy='nan 0 0')), 'lower'))
    add(('nan_origin', valid(j2=joint('j2', 'upper', 'lower', xyz='0 nan 0')), 'j2'))
    add(('inf_origin_rpy', valid(j2=joint('j2', 'upper', 'lower', rpy='0 0 -inf')), 'j2'))
    add(('long_origin', valid(j2=joint('j2', 'upper', 'lower', xyz='0 0 0 0')), 'j2'))
    add(('zero_axis', valid(j2=joint('j2', 'upper', 'lower', axis='0 0 0')), 'j2'))
    add(('nan_axis', valid(j2=joint('j2', 'upper', 'lower', axis='nan 0 1')), 'j2'))
    add(('inf_axis', valid(j2=joint('j2', 'upper', 'lower', axis='0 inf 0')), 'j2'))
    add(('tiny_axis', valid(j2=joint('j2', 'upper', 'lower', axis='1e-300 0 0')), 'j2'))
    add(('zero_axis_prismatic', valid(j2=joint('j2', 'upper', 'lower', 'prismatic',
                                               axis='0 0 0')), 'j2'))
    # mimic
    add(('mimic_missing', valid(j2=joint('j2', 'upper', 'lower',
                                         extra='<mimic joint="nope"/>')), 'nope'))
    add(('mimic_self', valid(j2=joint('j2', 'upper', 'lower', extra='<mimic joint="j2"/>')),
         'j2'))
    add(('mimic_loop', valid(j1=joint('j1', 'base', 'upper', extra='<mimic joint="j2"/>'),
                             j2=joint('j2', 'upper', 'lower', extra='<mimic joint="j1"/>')),
         'mimic'))
    add(('mimic_nan_multiplier', valid(j2=joint('j2', 'upper', 'lower', extra='<mimic '
                                                'joint="j1" multiplier="nan"/>')), 'j2'))
    add(('mimic_inf_offset', valid(j2=joint('j2', 'upper', 'lower', extra='<mimic '
                                            'joint="j1" offset="inf"/>')), 'j2'))
    add(('mimic_of_fixed', valid(j2=joint('j2', 'upper', 'lower', extra='<mimic '
                                          'joint="j3"/>')), 'j3'))
    return out


ROOT_LINK = {'root_link_missing': 'no_such_link'}


def huge_valid(links=3000):
    """Return a valid tree of ``links`` links: a spine with a branch at every link."""
    parts = [link('l0')]
    for i in range(1, links):
        parent = 'l%d' % ((i - 1) // 2)
        parts.append(link('l%d' % i, mass='%.3f' % (1.0 + math.sin(i) ** 2)))
        parts.append(joint('j%d' % i, parent, 'l%d' % i, axis='%d %d %d' % (
            i % 2, (i + 1) % 2, 1)))
    return robot(''.join(parts))
