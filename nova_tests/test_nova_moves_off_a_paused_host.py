"""Why guests must move before a series upgrade's prepare
(docs/index.md, "Series upgrades"): charm-nova-compute's own
pre-series-upgrade pauses nova-compute, its compute service then reports
down, and Nova's real code refuses to move guests off a host whose
service is down; a disabled (maintenance) service still lets them move.
"""
import inspect
from unittest import mock

import pytest
from nova import exception
from nova.compute import api as compute_api
from nova.conductor.tasks import live_migrate


def _with_service(up):
    task = mock.Mock()
    task.servicegroup_api.service_is_up.return_value = up
    return task


def test_live_migration_checks_that_the_source_is_up():
    assert 'self._check_host_is_up(self.source)' in inspect.getsource(
        live_migrate.LiveMigrationTask._execute)
    with mock.patch('nova.objects.Service.get_by_compute_host'):
        with pytest.raises(exception.ComputeServiceUnavailable):
            live_migrate.LiveMigrationTask._check_host_is_up(
                _with_service(up=False), 'compute-7.maas')
        # Up (a disabled service is up: maintenance): no refusal.
        live_migrate.LiveMigrationTask._check_host_is_up(
            _with_service(up=True), 'compute-7.maas')


def test_cold_migration_and_resize_check_that_the_host_is_up():
    source = inspect.getsource(compute_api.API)
    assert '@check_instance_host(check_is_up=True)\n    def resize(' in source

    @compute_api.check_instance_host(check_is_up=True)
    def resize(api, context, instance):
        return 'resized'

    instance = mock.Mock(host='compute-7.maas', services=[
        mock.Mock(binary='nova-compute')])
    with pytest.raises(exception.ServiceUnavailable):
        resize(_with_service(up=False), None, instance)
    assert resize(_with_service(up=True), None, instance) == 'resized'
