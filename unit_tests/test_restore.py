"""Where guests' vGPUs go back at boot (before Dalmatian)."""
from nvidia_vgpu.driver.restore import Creation, inventory_to_keep, plan

A = '4b20d080-1b54-4048-85b3-a6a62d165c01'
B = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'
C = '0c2e4a6b-8d1f-4e3a-b5c7-d9e1f3a5b7c9'
FREE = {'0000:84:00.0': {'nvidia-105': 16, 'nvidia-108': 2},
        '0000:85:00.0': {'nvidia-105': 16, 'nvidia-108': 2}}


def test_vgpus_go_back_where_they_were():
    creations, unresolved = plan(
        [A, B], set(), {A: ('0000:84:00.0', 'nvidia-108'),
                        B: ('0000:85:00.0', 'nvidia-105')}, {}, FREE)
    assert creations == [Creation(A, '0000:84:00.0', 'nvidia-108'),
                         Creation(B, '0000:85:00.0', 'nvidia-105')]
    assert unresolved == []


def test_existing_vgpus_are_left_alone():
    creations, _ = plan([A, B], {A, B}, {A: ('0000:84:00.0', 'nvidia-108')},
                        {}, FREE)
    assert creations == []


def test_an_unrecorded_vgpu_goes_onto_the_single_mapped_type():
    creations, unresolved = plan(
        [A, B, C], set(), {}, {'nvidia-108': ['0000:84:00.0',
                                              '0000:85:00.0']}, FREE)
    # Two fit per GPU: the first fills, then the next GPU.
    assert [(c.parent, c.type_id) for c in creations] == [
        ('0000:84:00.0', 'nvidia-108'), ('0000:84:00.0', 'nvidia-108'),
        ('0000:85:00.0', 'nvidia-108')]
    assert unresolved == []


def test_no_record_and_several_types_cannot_be_guessed():
    creations, unresolved = plan(
        [A], set(), {}, {'nvidia-108': ['0000:84:00.0'],
                         'nvidia-105': ['0000:85:00.0']}, FREE)
    assert creations == [] and unresolved == [A]


def test_a_recorded_place_that_no_longer_offers_the_type_falls_back():
    free = {'0000:84:00.0': {'nvidia-108': 0}, '0000:85:00.0': {
        'nvidia-108': 2}}
    creations, _ = plan([A], set(), {A: ('0000:84:00.0', 'nvidia-108')},
                        {'nvidia-108': ['0000:84:00.0', '0000:85:00.0']},
                        free)
    assert creations == [Creation(A, '0000:85:00.0', 'nvidia-108')]


def test_the_record_keeps_a_missing_vgpu_a_guest_still_names():
    # B's mdev is gone (not recreated at a boot), its guest still names
    # it: the record keeps where it was, for the next boot and for the
    # health check. C is gone and no guest names it: forgotten.
    kept = inventory_to_keep(
        {A: ('0000:84:00.0', 'nvidia-108')},
        {A: ('0000:84:00.0', 'nvidia-108'), B: ('0000:85:00.0', 'nvidia-105'),
         C: ('0000:85:00.0', 'nvidia-105')}, {A, B})
    assert kept == {A: ['0000:84:00.0', 'nvidia-108'],
                    B: ['0000:85:00.0', 'nvidia-105']}


def test_where_a_vgpu_is_now_wins_over_the_record():
    kept = inventory_to_keep({A: ('0000:85:00.0', 'nvidia-105')},
                             {A: ('0000:84:00.0', 'nvidia-108')}, {A})
    assert kept == {A: ['0000:85:00.0', 'nvidia-105']}
