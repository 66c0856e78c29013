#!/usr/bin/python3
"""Nailgun's own unit tests, ported to nailgun_plan.py, plus the rules it adds (tags, primaries).

    /usr/bin/python3 -m unittest discover -s shared/graphs/testdata -p 'nailgun_*_test.py'

Sources (openstack/fuel-web): nailgun/test/unit/test_lcm_transaction_serializer.py,
test_role_resolver.py, test_datadiff.py, test_yaql_ext.py.
"""

import json
import unittest

import yaml
import yaql
from yaql.language import exceptions

import nailgun_plan as ng


def edges(pairs):
    return sorted(pairs, key=lambda p: (p[0], str(p[1])))


class TestTransactionSerializer(unittest.TestCase):
    """test_lcm_transaction_serializer.py TestTransactionSerializer."""

    tasks = [
        {'id': 'task1', 'roles': ['controller'], 'type': 'puppet', 'version': '2.0.0',
         'parameters': {}, 'requires': ['task3'], 'required_for': ['task2'],
         'cross_depends': [{'name': 'task2', 'role': 'compute'}],
         'cross_depended_by': [{'name': 'task3', 'role': 'cinder'}]},
        {'id': 'task2', 'roles': ['compute', 'controller'], 'type': 'puppet', 'version': '2.0.0',
         'parameters': {}, 'cross_depends': [{'name': 'task3', 'role': 'cinder'}]},
        {'id': 'task3', 'roles': ['cinder', 'controller'], 'type': 'puppet', 'version': '2.0.0',
         'parameters': {}, 'cross_depends': [{'name': 'task3', 'role': '/.*/'}],
         'cross_depended_by': [{'name': 'task2', 'role': 'self'}]},
    ]
    tags = {'1': {'controller'}, '2': {'compute'}, '3': {'cinder'}, '4': {'custom'}}

    def serializer(self):
        data = {uid: {'attributes': {'a_int': int(uid)}} for uid in self.tags}
        return ng.TransactionSerializer(ng.Context(data, {}), ng.TagResolver(self.tags))

    def serialize(self, tasks):
        serializer = self.serializer()
        serializer.process_tasks(tasks)
        return serializer, serializer.resolve_dependencies()

    def test_serialize_integration(self):
        serializer, result = self.serialize(self.tasks)
        self.assertEqual({'task1', 'task2', 'task3'}, set(serializer.tasks_graph['1']))
        self.assertEqual(edges([('task3', '1'), ('task2', '2')]), edges(result['1']['task1'][0]))
        self.assertEqual(edges([('task2', '1'), ('task3', '3')]), edges(result['1']['task1'][1]))
        self.assertEqual([('task3', '3')], list(result['1']['task2'][0]))
        self.assertEqual([('task3', '3')], list(result['1']['task3'][0]))
        self.assertEqual([('task2', '1')], list(result['1']['task3'][1]))
        self.assertEqual({'task2'}, set(serializer.tasks_graph['2']))
        self.assertEqual([('task3', '3')], list(result['2']['task2'][0]))
        self.assertEqual({'task3'}, set(serializer.tasks_graph['3']))
        self.assertEqual([('task3', '1')], list(result['3']['task3'][0]))
        self.assertNotIn('4', serializer.tasks_graph)

    def test_resolve_nodes(self):
        serializer = self.serializer()
        self.assertEqual({None}, serializer.resolve_nodes({'id': 'deploy_start', 'type': 'stage'}))
        self.assertEqual({'2'}, serializer.resolve_nodes(
            {'id': 'deploy_start', 'type': 'skipped', 'groups': ['compute']}))
        self.assertEqual({'1'}, serializer.resolve_nodes(
            {'id': 'deploy_start', 'type': 'skipped', 'roles': ['controller']}))

    def test_dependencies_de_duplication(self):
        serializer = self.serializer()
        serializer.tasks_graph = {
            None: {},
            '1': {
                'task1': {'id': 'task1', 'requires': ['task2'],
                          'cross_depends': [{'role': 'self', 'name': 'task2'}]},
                'task2': {'id': 'task2', 'required_for': ['task1'],
                          'cross_depended_by': [{'role': 'self', 'name': 'task1'}]},
            },
        }
        result = serializer.resolve_dependencies()
        self.assertEqual(({('task2', '1')}, set()), result['1']['task1'])
        self.assertEqual((set(), {('task1', '1')}), result['1']['task2'])

    def test_tasks_expand_groups(self):
        tasks = list(self.tasks) + [
            {'id': 'task4', 'roles': ['/.*/'], 'type': 'puppet', 'version': '2.0.0', 'parameters': {},
             'cross_depends': [{'name': 'task2', 'role': 'self'}]},
            {'id': 'custom', 'type': 'group', 'roles': 'custom', 'tasks': ['task4', 'task2']},
        ]
        serializer, result = self.serialize(tasks)
        self.assertEqual({'task2', 'task4'}, set(serializer.tasks_graph['4']))
        self.assertEqual({('task3', '3')}, result['4']['task2'][0])
        self.assertEqual({('task2', '4')}, result['4']['task4'][0])

    def test_group_with_unknown_task_is_an_error(self):
        serializer = self.serializer()
        with self.assertRaises(ng.PlanError):
            serializer.process_tasks([{'id': 'g', 'type': 'group', 'roles': ['custom'], 'tasks': ['nope']}])

    def test_expand_dependencies(self):
        serializer = self.serializer()
        serializer.tasks_graph = {'1': {'task1': {}}, '2': {'task2': {}},
                                  None: {'deploy_start': {}, 'deploy_end': {}}}
        self.assertEqual([], list(serializer.expand_dependencies('1', None)))
        self.assertEqual([], list(serializer.expand_dependencies('1', [])))
        self.assertEqual({('deploy_start', None), ('task2', '2')},
                         set(serializer.expand_dependencies('2', ['deploy_start', 'task2'])))

    def test_expand_cross_dependencies(self):
        serializer = self.serializer()
        serializer.tasks_graph = {
            '1': {'task1': {}, 'task2': {}},
            '2': {'task3': {}, 'task2': {}, 'task1': {}},
            '3': {'task3': {}},
            None: {'deploy_start': {}, 'deploy_end': {}},
        }
        self.assertEqual([], list(serializer.expand_cross_dependencies('task1', '1', None)))
        self.assertEqual([], list(serializer.expand_cross_dependencies('task1', '1', [])))
        self.assertEqual(
            {('deploy_start', None), ('task2', '2'), ('task3', '2'), ('task3', '3')},
            set(serializer.expand_cross_dependencies('task2', '1', [
                {'name': 'deploy_start', 'role': None},
                {'name': 'task2', 'role': '/.*/'},
                {'name': 'task3', 'role': '/.*/'}])))
        self.assertEqual(
            {('task2', '2'), ('task1', '1')},
            set(serializer.expand_cross_dependencies('task2', '1', [
                {'name': 'task2'}, {'name': 'task1', 'role': 'self'}])))

    def test_need_update_task(self):
        need = ng.TransactionSerializer.need_update_task
        self.assertTrue(need({}, {'id': 'task1', 'type': 'puppet'}))
        self.assertTrue(need({'task1': {'type': 'skipped'}}, {'id': 'task1', 'type': 'puppet'}))
        self.assertFalse(need({'task1': {'type': 'skipped'}}, {'id': 'task1', 'type': 'skipped'}))
        self.assertFalse(need({'task1': {'type': 'puppet'}}, {'id': 'task1', 'type': 'skipped'}))

    def test_calculate_fault_tolerance(self):
        calc = ng.calculate_fault_tolerance
        self.assertEqual(11, calc(None, 10))
        self.assertEqual(0, calc(0, 10))
        self.assertEqual(1, calc('10%', 10))
        self.assertEqual(0, calc('2%', 10))
        self.assertEqual(8, calc(-2, 10))
        self.assertEqual(0, calc(-20, 10))
        self.assertEqual(11, calc('abc', 10))


class TestTaskSerializers(unittest.TestCase):
    """task_serializer.py DefaultTaskSerializer / NoopTaskSerializer, via the whole serializer."""

    def plan(self, tasks, data=None, old=None):
        return ng.plan({'tasks': tasks, 'roles_metadata': {}, 'tags_metadata': {},
                        'nodes': [{'uid': '1', 'roles': ['compute'], 'data': data or {'a': 1}, 'old': old}]})

    def test_condition_and_types(self):
        tasks = [
            {'id': 'start', 'type': 'stage'},
            {'id': 'plain', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute'], 'requires': ['start']},
            {'id': 'off', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute'],
             'condition': {'yaql_exp': '$.a = 2'}, 'requires': ['plain']},
            {'id': 'empty', 'type': 'shell', 'version': '2.1.0', 'role': ['compute'],
             'condition': {'yaql_exp': '[]'}},
            {'id': 'noop', 'type': 'skipped', 'version': '2.1.0', 'role': ['compute']},
            {'id': 'nowhere', 'type': 'puppet', 'version': '2.1.0', 'role': ['cinder']},
        ]
        result = self.plan(tasks)
        node = result['nodes']['1']
        self.assertEqual(['empty', 'noop', 'off', 'plain'], node['placed'])
        self.assertEqual(['plain'], node['run'])
        self.assertEqual({'empty': 'condition', 'noop': 'skipped_type', 'off': 'condition'}, node['skipped'])
        # a skipped task keeps its dependencies
        self.assertEqual([['plain', '1']], node['requires']['off'])
        self.assertEqual([['start', None]], node['requires']['plain'])
        self.assertEqual({'start': 'stage'}, result['nodes']['null']['skipped'])
        self.assertEqual(['nowhere'], result['unplaced'])

    def test_yaql_in_strategy_and_cross_depends(self):
        tasks = [
            {'id': 'a', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute'],
             'parameters': {'strategy': {'type': 'parallel', 'amount': {'yaql_exp': '$.a + 5'}}}},
            {'id': 'b', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute'],
             'cross-depends': {'yaql_exp': "[{name => 'a', role => 'self'}]"}},
        ]
        node = self.plan(tasks)['nodes']['1']
        self.assertEqual({'a': {'type': 'parallel', 'amount': 6}}, node['strategy'])
        self.assertEqual({'b': [{'name': 'a', 'role': 'self'}]}, node['cross_depends'])
        self.assertEqual([['a', '1']], node['requires']['b'])

    def test_changed_first_run_and_rerun(self):
        tasks = [{'id': 't', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute'],
                  'condition': {'yaql_exp': 'changed($.a)'}}]
        self.assertEqual(['t'], self.plan(tasks, {'a': 1}, None)['nodes']['1']['run'])
        self.assertEqual([], self.plan(tasks, {'a': 1}, {'a': 1})['nodes']['1']['run'])
        self.assertEqual(['t'], self.plan(tasks, {'a': 2}, {'a': 1})['nodes']['1']['run'])

    def test_yaql_error_is_reported(self):
        tasks = [{'id': 'a', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute']},
                 {'id': 't', 'type': 'puppet', 'version': '2.1.0', 'role': ['compute'], 'requires': ['a'],
                  'condition': {'yaql_exp': '$.missing.key'}}]
        result = self.plan(tasks)
        self.assertEqual({'t': 'error'}, result['nodes']['1']['skipped'])
        self.assertEqual('t', result['errors'][0]['task'])
        self.assertEqual([['a', '1']], result['nodes']['1']['requires']['t'])

    def test_stored_task_keeps_custom_falsy_fields(self):
        stored = ng.stored_task({'id': 'g', 'type': 'group', 'role': 'x', 'fault_tolerance': 0,
                                 'requires': [], 'cross-depends': [{'name': 'a'}]})
        self.assertEqual({'id': 'g', 'type': 'group', 'roles': ['x'], 'fault_tolerance': 0,
                          'cross_depends': [{'name': 'a'}]}, stored)


class TestResolver(unittest.TestCase):
    """test_role_resolver.py TestNameMatchPolicy / TestPatternBasedRoleResolver, on tags."""

    tags = {'0': {'primary-controller'}, '1': {'cinder'}, '2': {'controller', 'compute'},
            '3': {'controller', 'cinder'}, '4': {'compute'}}

    def test_name_match(self):
        self.assertTrue(ng.name_matcher('controller')('controller'))
        self.assertFalse(ng.name_matcher('controller')('controller1'))
        self.assertTrue(ng.name_matcher('/controller/')('controller1'))
        self.assertTrue(ng.name_matcher('/controller/')('primary-controller'))

    def test_resolve_by_pattern(self):
        resolver = ng.TagResolver(self.tags)
        self.assertEqual({'0', '2', '3'}, resolver.resolve(['/.*controller/']))
        self.assertEqual({'2', '3'}, resolver.resolve(['controller']))
        # The old role resolver anchored patterns (re.match: {1, 2, 3, 4}); policy/name_match.py,
        # used by TagResolver and the LCM serializer, searches (re.search), so primary-controller matches.
        self.assertEqual({'0', '1', '2', '3', '4'}, resolver.resolve(['/c.+/']))
        self.assertEqual({'1', '2', '3', '4'}, resolver.resolve(['/^c.+/']))

    def test_resolve_all_master_any(self):
        resolver = ng.TagResolver(self.tags)
        self.assertEqual(set(self.tags), resolver.resolve('*'))
        self.assertEqual({'master'}, resolver.resolve('master'))
        self.assertEqual({'0'}, resolver.resolve('*', 'any'))
        self.assertEqual(set(), resolver.resolve({'not': 'a list'}))
        self.assertEqual(set(), resolver.resolve(['nothing-has-this']))


class TestNodeTags(unittest.TestCase):
    metadata = yaml.safe_load('''
roles_metadata:
  controller: {tags: [controller, rabbitmq, database]}
  compute: {tags: [compute]}
  mongo: {tags: [mongo]}
tags_metadata:
  controller: {has_primary: true}
  rabbitmq: {has_primary: true}
  database: {has_primary: true}
  compute: {has_primary: false}
  mongo: {has_primary: true}
''')

    def tags(self, nodes):
        return ng.node_tags(nodes, self.metadata['roles_metadata'], self.metadata['tags_metadata'])

    def test_astute_primary_role_wins_over_lowest_uid(self):
        tags = self.tags([{'uid': '5', 'roles': ['controller']}, {'uid': '9', 'roles': ['primary-controller']},
                          {'uid': '10', 'roles': ['compute', 'mongo']}, {'uid': '11', 'roles': ['mongo']},
                          {'uid': '12', 'roles': ['custom']}])
        self.assertEqual({'controller', 'rabbitmq', 'database'}, tags['5'])
        self.assertEqual({'primary-controller', 'primary-rabbitmq', 'primary-database'}, tags['9'])
        self.assertEqual({'compute', 'primary-mongo'}, tags['10'])   # lowest uid, numerically
        self.assertEqual({'mongo'}, tags['11'])
        self.assertEqual({'custom'}, tags['12'])

    def test_without_astute_primary_lowest_uid(self):
        tags = self.tags([{'uid': '3', 'roles': ['controller']}, {'uid': '2', 'roles': ['controller']}])
        self.assertEqual({'primary-controller', 'primary-rabbitmq', 'primary-database'}, tags['2'])
        self.assertEqual({'controller', 'rabbitmq', 'database'}, tags['3'])


class TestDataDiff(unittest.TestCase):
    """test_datadiff.py."""

    def check_diff(self, data1, data2, added, deleted):
        result = ng.nailgun_yaql.diff(data1, data2)
        self.assertEqual(added, result.added)
        self.assertEqual(deleted, result.deleted)
        same = ng.nailgun_yaql.diff(data2, data2)
        self.assertFalse(same.added)
        self.assertFalse(same.deleted)
        self.assertEqual(data1, ng.nailgun_yaql.diff(data1, None).deleted)
        self.assertEqual(data1, ng.nailgun_yaql.diff(None, data1).added)

    def test_diff_dict(self):
        self.check_diff({'a': 1, 'b': 2, 'c': {'d': {'e': 3}}}, {'a': 1, 'b': 2, 'd': {'e': 3}},
                        {'d': {'e': 3}}, {'c': {'d': {'e': 3}}})

    def test_diff_list(self):
        self.check_diff([1, 2, 3], [2, 3, 4], [4], [1])

    def test_diff_list_of_nested_dicts(self):
        self.check_diff([{'a': {'b': 1}}, {'c': [1]}], [{'c': [1]}, {'d': {}}], [{'d': {}}], [{'a': {'b': 1}}])

    def test_diff_set(self):
        self.check_diff({1, 2, 3}, {2, 3, 4}, {4}, {1})

    def test_diff_range_and_iterable(self):
        result = ng.nailgun_yaql.diff(range(3), range(1, 4))
        self.assertEqual(([3], [0]), (result.added, result.deleted))
        result = ng.nailgun_yaql.diff((x for x in range(3)), (x for x in range(1, 4)))
        self.assertEqual(([3], [0]), (result.added, result.deleted))

    def test_diff_text(self):
        result = ng.nailgun_yaql.diff('abc\nbcd', 'bcd\ncda')
        self.assertEqual((['cda'], ['abc']), (result.added, result.deleted))


class TestYaqlExt(unittest.TestCase):
    """test_yaql_ext.py, with Nailgun's later names $%new / $%old and changedAny / changedAll."""

    new = {'nodes': [{'uid': '1', 'role': 'compute'}, {'uid': '2', 'role': 'controller'}],
           'configs': {'nova': {'value': 1, 'value2': None}}, 'cluster': {'status': 'operational'}}
    old = {'nodes': [{'uid': '1', 'role': 'controller'}, {'uid': '2', 'role': 'compute'}],
           'configs': {'nova': {'value': 2, 'value2': None}}, 'cluster': {'status': 'new'}}

    def evaluate(self, expression, old=None, options=None):
        context = ng.create_yaql_context()
        context['$%new'] = self.new
        context['$%old'] = self.old if old is None else old
        context['$'] = self.new
        engine = yaql.YaqlFactory().create(options or ng.ENGINE_OPTIONS)
        return engine(expression).evaluate(context=context)

    def test_new_old(self):
        self.assertEqual([{'uid': '1', 'role': 'compute'}], self.evaluate('new($.nodes.where($.role=compute))'))
        self.assertEqual([{'uid': '2', 'role': 'compute'}], self.evaluate('old($.nodes.where($.role=compute))'))

    def test_added_deleted(self):
        self.assertEqual([{'uid': '1', 'role': 'compute'}], self.evaluate('added($.nodes.where($.role=compute))'))
        self.assertEqual([{'uid': '2', 'role': 'compute'}], self.evaluate('deleted($.nodes.where($.role=compute))'))

    def test_changed(self):
        self.assertTrue(self.evaluate('changed($.configs.nova.value)'))
        self.assertFalse(self.evaluate('changed($.configs.nova.value2)'))
        self.assertTrue(self.evaluate('changedAny($.configs.nova.value2, $.cluster.status)'))
        self.assertFalse(self.evaluate('changedAll($.configs.nova.value2, $.cluster.status)'))
        self.assertTrue(self.evaluate('changedAll($.configs.nova.value, $.cluster.status)'))
        self.assertFalse(self.evaluate('changedAny($.configs.nova.value2)'))

    def test_without_old(self):
        self.assertEqual([{'uid': '1', 'role': 'compute'}],
                         self.evaluate('added($.nodes.where($.role=compute))', old={}))
        self.assertIsNone(self.evaluate('deleted($.nodes.where($.role=compute))', old={}))
        self.assertTrue(self.evaluate('changed($.configs.nova.value)', old={}))
        self.assertTrue(self.evaluate('changed($.configs.nova.value2)', old={}))
        self.assertTrue(self.evaluate('old($.configs.nova.value).isUndef()', old={}))
        self.assertFalse(self.evaluate('new($.configs.nova.value).isUndef()', old={}))

    def test_serializers(self):
        self.assertEqual(yaml.safe_dump(self.new['configs']), self.evaluate('$.configs.toYaml()'))
        self.assertEqual(json.dumps(self.new['configs']), self.evaluate('$.configs.toJson()'))

    def test_limit_iterables(self):
        options = {'yaql.limitIterators': 1, 'yaql.convertTuplesToLists': True, 'yaql.convertSetsToLists': True}
        for expression in ('$.nodes', '$.configs.nova'):
            for function in ('added', 'deleted', 'changed'):
                with self.assertRaises(exceptions.CollectionTooLargeException):
                    self.evaluate('%s(%s)' % (function, expression), options=options)
        for expression in ('$.configs.nova.value', '$.cluster.status'):
            for function in ('added', 'deleted', 'changed'):
                self.evaluate('%s(%s)' % (function, expression), options=options)


if __name__ == '__main__':
    unittest.main()
