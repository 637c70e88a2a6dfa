"""Reading an option an operator wrote as YAML (or JSON), strictly.

Options such as vgpu-device-mappings and mig-layout end up in nova.conf
or on nvidia-smi's command line, so each string in them must match a
fixed grammar as a whole. This module reads the value as a YAML node
tree (never through YAML's type resolution: an unquoted 0000:41:00.0 is
a base-60 float to a YAML 1.1 loader, and an operator should not have to
know that), refuses tags and any character but printable ASCII (naming
the character, before anything else is said), and bounds the work a
value can cause. The caller's error type carries its option's name.
"""
import unicodedata
from typing import Callable, Optional

import yaml

MAX_TEXT_BYTES = 64 * 1024
# Every node visited counts, aliases again each time they are used, so a
# few anchors cannot expand into millions of entries.
MAX_NODES = 10000

Fail = Callable[[str], Exception]

# What to call characters Unicode gives no name (controls, mostly).
_UNNAMED = {'Cc': 'a control character', 'Co': 'a private-use character',
            'Cs': 'a surrogate'}


def shown(text: str) -> str:
    """A value quoted for a status line: short, one line, ASCII, every
    other character escaped as Python writes it ('\\n', '\\u2013')."""
    return ascii(text if len(text) <= 40 else text[:37] + '...')


def printable_ascii(value: str, where: str, allowed: str,
                    fail: Fail) -> None:
    """Refuse any character but printable ASCII, naming it and where.

    Checked before the grammar so that the operator learns which
    invisible or look-alike character (a pasted newline, a non-breaking
    space, an en dash, a fullwidth digit) made the value wrong. allowed:
    what is printable ASCII only, as the message says it.
    """
    for position, character in enumerate(value, 1):
        if ' ' <= character <= '~':
            continue
        kind = unicodedata.name(character, '') or _UNNAMED.get(
            unicodedata.category(character), 'unassigned')
        raise fail(
            '{} holds {} (U+{:04X}, {}) at character {}; {} are printable '
            'ASCII only: retype the value without it'.format(
                where, ascii(character), ord(character), kind, position,
                allowed))


class Budget:
    """How many more nodes the value may have."""

    def __init__(self, fail: Fail) -> None:
        self.left = MAX_NODES
        self.fail = fail

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise self.fail(
                'too many entries (more than {} after expanding YAML '
                'aliases)'.format(MAX_NODES))


def scalar(node: yaml.Node, what: str, fail: Fail) -> str:
    """A node that must be text."""
    if not isinstance(node, yaml.ScalarNode):
        raise fail('{} must be text, not a {}'.format(
            what, 'list' if isinstance(node, yaml.SequenceNode)
            else 'mapping'))
    return node.value


# Tokens that open and close a collection (a mapping or a list), in
# flow ({...}, [...]) or block (indented) style.
_OPENS = (yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken,
          yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken)
_CLOSES = (yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken,
           yaml.BlockEndToken)


def compose(text: Optional[str], example: str, fail: Fail,
            depth: int) -> Optional[yaml.Node]:
    """The value's node tree; None for an empty value.

    depth: how many collections the option's form nests (2 for a mapping
    of lists). The scanner, which does not recurse, counts them before
    PyYAML's composer, which does: a value nested hundreds deep fails
    with the option's own error, not a RecursionError that fails the
    hook. One level too deep is left to the caller, whose message names
    the entry (`must be text, not a list`)."""
    if text is None:
        return None
    text = str(text)
    # ASCII blanks only: str.strip() would also take '\x1c' or '\u2028'
    # for nothing, where YAML sees characters.
    if not text.strip(' \t\r\n'):
        return None
    if len(text.encode('utf-8', 'replace')) > MAX_TEXT_BYTES:
        raise fail('longer than {} bytes'.format(MAX_TEXT_BYTES))
    try:
        level = 0
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.TagToken):
                raise fail('YAML tags are not allowed; write plain text, '
                           'e.g. ' + example)
            if isinstance(token, _OPENS):
                level += 1
                if level > depth + 1:
                    raise fail('nested deeper than its form ({} levels of '
                               'mappings and lists); expected e.g. {}'
                               .format(depth, example))
            elif isinstance(token, _CLOSES):
                level -= 1
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise fail(_yaml_problem(error, example))


def _yaml_problem(error: yaml.YAMLError, example: str) -> str:
    mark = getattr(error, 'problem_mark', None)
    where = ' at line {}, column {}'.format(
        mark.line + 1, mark.column + 1) if mark else ''
    problem = getattr(error, 'problem', None) or 'cannot be parsed'
    # PyYAML quotes the offending character as it is: escape it, so the
    # status stays one line of ASCII.
    problem = ''.join(c if ' ' <= c <= '~' else ascii(c)[1:-1]
                      for c in problem)
    return 'not valid YAML or JSON ({}{}); expected e.g. {}'.format(
        problem, where, example)
