"""Property: whatever structure an operator's value has, each option
parser either refuses it with the option's own error or returns a result
of printable ASCII; nothing else escapes (a RecursionError, a
ConstructorError, a TypeError would fail the hook).

Generated: nesting of any depth (deeper than PyYAML's composer can
recurse, in flow and in block style), anchors and aliases, duplicate
keys, several documents, odd scalars (booleans, floats, nulls,
timestamps, tags), Unicode look-alikes, control characters and line
breaks, and values at the 64 KiB limit. test_mappings_fuzz.py checks the
accepted values against the option's meaning; this one checks only that
every value ends in the option's own answer.

Deterministic (derandomized, no example database) and bounded, for CI.
"""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvidia_vgpu import option_text
from nvidia_vgpu.mig import layout
from nvidia_vgpu.nova import mappings

import fuzzing

FUZZ = fuzzing.budget(200)

SCALARS = ['nvidia-108', 'V100-8Q', '0000:84:00.0', '10de:1db4',
           '10de:2330', '1g.10gb', '3g.40gb', '4', 'true', 'no', '~',
           'null', '1.5', '0x1F', '2001-12-14', '12:30:45', '"quoted"',
           "'single'", '!!binary aGVsbG8=', '!!str x', '&a x', '*a',
           '<<', 'NVIDIA\u2011V100', '\uff10000:84:00.0', 'nvidia\u00a0108',
           'a\u200bb', '\x00', '\x1b[31m', 'x\u2028y', '']


def flow(depth: int, opener: str) -> str:
    """A value nested `depth` deep in flow style."""
    closer = {'{': '}', '[': ']'}[opener]
    inner = "'nvidia-108'" if opener == '[' else "a: b"
    return opener * depth + inner + closer * depth


def block(depth: int) -> str:
    """A mapping nested `depth` deep in block style, one space a level."""
    return ''.join(' ' * level + 'k:\n' for level in range(depth)) + \
        ' ' * depth + 'x\n'


@st.composite
def structures(draw):
    """YAML texts of every shape the options might be given."""
    kind = draw(st.sampled_from([
        'flow', 'block', 'nested', 'anchors', 'duplicates', 'documents',
        'scalars', 'limit']))
    if kind == 'flow':
        return flow(draw(st.integers(1, 2000)), draw(st.sampled_from(
            ['{', '['])))
    if kind == 'block':
        return block(draw(st.integers(1, 350)))
    if kind == 'nested':
        # Real keys over a random mix of lists and mappings.
        depth = draw(st.integers(1, 600))
        openers = draw(st.lists(st.sampled_from(['[', '{k: ']),
                                min_size=depth, max_size=depth))
        closers = ''.join(']' if o == '[' else '}' for o in reversed(openers))
        return "{'nvidia-108': " + ''.join(openers) + "'0000:84:00.0'" + \
            closers + '}'
    if kind == 'anchors':
        count = draw(st.integers(1, 40))
        lines = ['a0: &a0 [0000:84:00.0]']
        lines += ['a{}: &a{} [*a{}, *a{}]'.format(i, i, i - 1, i - 1)
                  for i in range(1, count)]
        return '\n'.join(lines) + '\n'
    if kind == 'duplicates':
        key = draw(st.sampled_from(SCALARS))
        return '{{{0}: [0000:84:00.0], {0}: [0000:85:00.0]}}'.format(
            key or "''")
    if kind == 'documents':
        return "{'nvidia-108': ['0000:84:00.0']}\n---\n" + draw(
            st.sampled_from(SCALARS)) + '\n...\n'
    if kind == 'scalars':
        key = draw(st.sampled_from(SCALARS))
        value = draw(st.sampled_from(SCALARS))
        return draw(st.sampled_from([
            '{{{}: [{}]}}', '{{{}: {}}}', '{}: {}', '[{}, {}]',
            '{{{}: {{{}: 4}}}}'])).format(key, value)
    # At the size limit, just under and just over.
    filler = draw(st.sampled_from([' ', '#', '\n']))
    value = "{'nvidia-108': ['0000:84:00.0']}"
    size = option_text.MAX_TEXT_BYTES - len(value) + draw(
        st.integers(-2, 2))
    return value + filler * max(size, 0)


def printable(value) -> bool:
    """Every text in a parsed result is printable ASCII."""
    if isinstance(value, dict):
        return all(printable(k) and printable(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(printable(item) for item in value)
    if isinstance(value, str):
        return all(' ' <= c <= '~' for c in value)
    return isinstance(value, int)


@pytest.mark.parametrize('parse,refusal', [
    (mappings.parse, mappings.MappingError),
    (layout.parse, layout.LayoutError)], ids=['vgpu-device-mappings',
                                              'mig-layout'])
@FUZZ
@given(text=structures())
def test_every_structure_ends_in_the_options_own_answer(parse, refusal,
                                                        text):
    try:
        parsed = parse(text)
    except refusal:
        return
    assert printable(parsed)
