"""Values nested deeper than an option's form are refused with the
option's own error, before PyYAML's recursive composer can fail the hook
(scenarios/nova-config/deeply-nested-values-refused.yaml tells it end to
end)."""
import pytest

from nvidia_vgpu.hook_plan import facts as hook_facts, preview
from nvidia_vgpu.mig import layout
from nvidia_vgpu.nova import mappings
from snapshots import V100S

DEEP = [
    pytest.param('{' * 500 + '}' * 500, id='flow mappings'),
    pytest.param('[' * 500 + ']' * 500, id='flow lists'),
    pytest.param("{'nvidia-108': " + '[' * 400 + ']' * 400 + '}',
                 id='a list under a key'),
    # Indented one more space a level: 300 levels in 46 KB.
    pytest.param(''.join('{}k:\n'.format(' ' * level)
                         for level in range(300)) + ' ' * 300 + 'x',
                 id='block style'),
]


@pytest.mark.parametrize('text', DEEP)
def test_mappings_refuse_a_value_nested_past_their_form(text):
    with pytest.raises(mappings.MappingError,
                       match='nested deeper than its form'):
        mappings.parse(text)


@pytest.mark.parametrize('text', DEEP)
def test_mig_layout_refuses_a_value_nested_past_its_form(text):
    with pytest.raises(layout.LayoutError,
                       match='nested deeper than its form'):
        layout.parse(text)


@pytest.mark.parametrize('text,parsed', [
    ("{'nvidia-108': ['0000:84:00.0']}", {'nvidia-108': ['0000:84:00.0']}),
    ('nvidia-108:\n  - 0000:84:00.0\n', {'nvidia-108': ['0000:84:00.0']}),
    ('nvidia-108:\n- 0000:84:00.0\n', {'nvidia-108': ['0000:84:00.0']}),
])
def test_the_forms_themselves_still_pass(text, parsed):
    assert mappings.parse(text) == parsed


def test_a_layout_at_its_depth_passes():
    assert layout.parse("{'10de:20b5': {'1g.10gb': 4}}") == {
        '10de:20b5': {'1g.10gb': 4}}


@pytest.mark.parametrize('option', [mappings.OPTION, layout.OPTION])
def test_preview_config_refuses_a_deep_value_as_the_status_would(option):
    """The preview-config action's parameters are option values: the
    same refusal, as the action's failure message."""
    found = preview.preview(hook_facts.HookFacts(V100S), {},
                            {option: '[' * 500 + ']' * 500},
                            hook_facts.UnitState())
    assert found.refused.startswith('Invalid {}: '.format(option))
    assert 'nested deeper than its form' in found.refused
    assert found.results == {}
