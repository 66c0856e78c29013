#!/usr/bin/python3
"""Evaluates every yaql_exp of Fuel's release graphs with python3-yaql, the reference engine.

Usage: /usr/bin/python3 reference.py RELEASE_DIR HIERA_DIR OLD_STATES_JSON [EXTRA_EXPRESSIONS]

Writes one JSON document to stdout: {"expressions": [...], "results": [...]}, where every
result names its expression (file, path), node file and old state, and holds either the
value or an error. shared/yaql's differential test runs this and compares every value.

The engine is set up as Nailgun set it up (nailgun/yaql_ext: the engine options, the
datadiff and serializer functions, $%new/$%old/$node/$common in the context), with one
adjustment: attribute access on a dict returns null for a missing key, as the yaql 1.1
Nailgun ran did (python3-yaql 2.0 raises KeyError there).
"""

import copy
import difflib
import json
import os
import sys

import yaml
import yaql
from yaql.language import specs
from yaql.language import utils as yaqlutils
from yaql.language import yaqltypes

# nailgun/yaql_ext/__init__.py, but for the memory quota: Nailgun's 20,000 bytes of
# sys.getsizeof are CPython's own measure (tuningbox bounds an evaluation by its own
# step and value budgets instead), and two of the release's expressions exceed it.
ENGINE_OPTIONS = {
    'yaql.limitIterators': 5000,
    'yaql.convertTuplesToLists': True,
    'yaql.convertSetsToLists': True,
}

_UNDEFINED = object()
UNDEFINED_JSON = {'$yaql': 'undefined'}


# nailgun/utils/datadiff.py, ported.
class DataDiff(object):
    def __init__(self, added=None, deleted=None):
        self.added = added
        self.deleted = deleted


def diff(a, b):
    if type(a) is not type(b):
        return _diff_any(a, b)
    if isinstance(a, str):
        return _diff_array(a.splitlines(), b.splitlines())
    if isinstance(a, yaqlutils.MappingType):
        return _diff_dict(a, b)
    if isinstance(a, yaqlutils.SetType):
        return DataDiff(added=b - a, deleted=a - b)
    if isinstance(a, (list, tuple)):
        return _diff_array(a, b)
    if isinstance(a, yaqlutils.IterableType):
        return _diff_array(list(a), list(b))
    return _diff_any(a, b)


def _diff_any(a, b):
    return DataDiff() if a == b else DataDiff(added=b, deleted=a)


def _diff_array(a, b):
    sm = difflib.SequenceMatcher(a=do_hashable(a), b=do_hashable(b))
    added = []
    deleted = []
    for change, i1, i2, j1, j2 in sm.get_opcodes():
        if change in ('insert', 'replace'):
            added.extend(b[j1:j2])
        if change in ('delete', 'replace'):
            deleted.extend(a[i1:i2])
    return DataDiff(added=added, deleted=deleted)


def _diff_dict(a, b):
    added = {}
    deleted = {}
    for key in a:
        if key not in b:
            deleted[key] = a[key]
        elif a[key] != b[key]:
            deleted[key] = a[key]
            added[key] = b[key]
    for key in b:
        if key not in a:
            added[key] = b[key]
    return DataDiff(added=added, deleted=deleted)


def do_hashable(data):
    try:
        hash(data)
        return data
    except TypeError:
        pass
    if isinstance(data, yaqlutils.MappingType):
        return frozenset(do_hashable(x) for x in data.items())
    if isinstance(data, yaqlutils.SetType):
        return frozenset(do_hashable(x) for x in data)
    if isinstance(data, yaqlutils.IterableType):
        return tuple(do_hashable(x) for x in data)
    raise TypeError('unhashable type: {0}'.format(type(data)))


# nailgun/yaql_ext/datadiff.py, ported (changedAny/changedAll as Nailgun registers them).
@specs.parameter('expression', yaqltypes.Lambda())
def get_new(expression, context):
    return expression(context['$%new'])


@specs.parameter('expression', yaqltypes.Lambda())
def get_old(expression, context):
    try:
        return expression(context['$%old'])
    except Exception:
        # an expression that fails on the old data means the data changed
        return _UNDEFINED


@specs.parameter('expression', yaqltypes.Lambda())
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def changed(finalizer, expression, context):
    new_data = finalizer(get_new(expression, context))
    old_data = finalizer(get_old(expression, context))
    return new_data != old_data


@specs.parameter('expressions', yaqltypes.Lambda())
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def changed_all(finalizer, context, *expressions):
    return all(changed(finalizer, e, context) for e in expressions)


@specs.parameter('expressions', yaqltypes.Lambda())
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def changed_any(finalizer, context, *expressions):
    return any(changed(finalizer, e, context) for e in expressions)


def get_limited_if_need(data, engine):
    if (yaqlutils.is_iterable(data) or yaqlutils.is_sequence(data) or
            isinstance(data, (yaqlutils.MappingType, yaqlutils.SetType))):
        return yaqlutils.limit_iterable(data, engine)
    return data


@specs.parameter('expression', yaqltypes.Lambda())
def added(expression, context, engine):
    new_data = get_limited_if_need(get_new(expression, context), engine)
    old_data = get_limited_if_need(get_old(expression, context), engine)
    if old_data is _UNDEFINED:
        return new_data
    return diff(old_data, new_data).added


@specs.parameter('expression', yaqltypes.Lambda())
def deleted(expression, context, engine):
    new_data = get_limited_if_need(get_new(expression, context), engine)
    old_data = get_limited_if_need(get_old(expression, context), engine)
    if old_data is not _UNDEFINED:
        return diff(old_data, new_data).deleted


@specs.method
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def is_undef(finalizer, receiver):
    return finalizer(receiver) is _UNDEFINED


# nailgun/yaql_ext/serializers.py
@specs.method
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def to_yaml(finalizer, receiver):
    return yaml.safe_dump(finalizer(receiver))


@specs.method
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def to_json(finalizer, receiver):
    return json.dumps(finalizer(receiver))


# yaql 1.1's attribute access on dicts (a missing key is null).
@specs.parameter('d', yaqlutils.MappingType, alias='dict')
@specs.parameter('key', yaqltypes.Keyword())
@specs.name('#operator_.')
def dict_keyword_access(d, key):
    return d.get(key)


def create_context():
    context = yaql.create_context()
    context = context.create_child_context()
    context.register_function(dict_keyword_access)
    context.register_function(get_new, name='new')
    context.register_function(get_old, name='old')
    context.register_function(changed)
    context.register_function(changed_all, name='changedAll')
    context.register_function(changed_any, name='changedAny')
    context.register_function(added)
    context.register_function(deleted)
    context.register_function(is_undef)
    context.register_function(to_yaml)
    context.register_function(to_json)
    return context


def json_shaped(data):
    # The documents as tuningbox holds them: JSON, with keys in sorted order (Go maps
    # have none, so shared/yaql lists a dict's keys sorted).
    return json.loads(json.dumps(data, sort_keys=True))


def apply_changes(doc, changes):
    doc = copy.deepcopy(doc)
    for change in changes:
        parent = doc
        for key in change['path'][:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        last = change['path'][-1]
        if change.get('delete'):
            parent.pop(last, None)
        else:
            parent[last] = copy.deepcopy(change['value'])
    return json_shaped(doc)


def expressions_of(release_dir):
    found = []

    def walk(value, path, file_name):
        if isinstance(value, dict):
            if set(value) == {'yaql_exp'}:
                found.append({'file': file_name, 'path': path,
                              'expr': value['yaql_exp']})
                return
            for key in sorted(value):
                walk(value[key], path + [key], file_name)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, path + [i], file_name)

    for name in sorted(os.listdir(release_dir)):
        if name.endswith('.yaml'):
            with open(os.path.join(release_dir, name)) as f:
                walk(yaml.safe_load(f), [], name)
    return found


def extra_expressions_of(path):
    # One expression per line, '#' comments: file is the list's name, path the line number.
    found = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.strip() and not line.startswith('#'):
                found.append({'file': os.path.basename(path), 'path': [number],
                              'expr': line.rstrip('\n')})
    return found


def to_json_value(value):
    if value is _UNDEFINED:
        return UNDEFINED_JSON
    return value


def main():
    release_dir, hiera_dir, states_file = sys.argv[1:4]
    with open(states_file) as f:
        states = json.load(f)
    exprs = expressions_of(release_dir)
    if len(sys.argv) > 4:
        exprs += extra_expressions_of(sys.argv[4])
    engine = yaql.YaqlFactory().create(ENGINE_OPTIONS)
    parsed = {}
    for e in exprs:
        if e['expr'] not in parsed:
            try:
                parsed[e['expr']] = engine(e['expr'])
            except Exception as err:
                parsed[e['expr']] = err
    base = create_context()
    results = []
    for node_file in sorted(os.listdir(hiera_dir)):
        if not node_file.endswith('.yaml'):
            continue
        with open(os.path.join(hiera_dir, node_file)) as f:
            new = json_shaped(yaml.safe_load(f))
        olds = {
            'none': {},
            'same': new,
            'changed': apply_changes(new, states['changed']),
        }
        for state in ('none', 'same', 'changed'):
            context = base.create_child_context()
            context['$%new'] = new
            context['$%old'] = olds[state]
            context['$node'] = new
            for name, value in states['vars'].items():
                context['$' + name] = value
            context['$'] = new
            for e in exprs:
                record = {'file': e['file'], 'path': e['path'],
                          'node': node_file, 'old': state}
                expression = parsed[e['expr']]
                try:
                    if isinstance(expression, Exception):
                        raise expression
                    value = expression.evaluate(
                        context=context.create_child_context())
                    record['value'] = to_json_value(value)
                except Exception as err:
                    record['error'] = '{0}: {1}'.format(
                        type(err).__name__, err)
                results.append(record)
    json.dump({'expressions': exprs, 'results': results}, sys.stdout,
              sort_keys=True)


if __name__ == '__main__':
    main()
