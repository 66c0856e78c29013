"""Nailgun's yaql extensions on Debian's python3-yaql, for the reference sides of tuningbox's tests.

A port of openstack/fuel-web's nailgun/utils/datadiff.py and nailgun/yaql_ext/ (datadiff.py,
serializers.py): new, old, changed, changedAll, changedAny, added, deleted, isUndef, toYaml,
toJson. shared/yaql/testdata/reference.py (the yaql engine's differential test) and
shared/graphs/testdata/nailgun_plan.py (the planner's) both evaluate through create_context, so
the two references cannot drift apart. One adjustment to python3-yaql 2.0: attribute access on a
dict returns null for a missing key, as the yaql 1.1 Nailgun ran did (2.0 raises KeyError).
"""

import difflib
import json

import yaml
import yaql
from yaql.language import specs
from yaql.language import utils as yaqlutils
from yaql.language import yaqltypes

UNDEFINED = object()


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
        return UNDEFINED


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
    if old_data is UNDEFINED:
        return new_data
    return diff(old_data, new_data).added


@specs.parameter('expression', yaqltypes.Lambda())
def deleted(expression, context, engine):
    new_data = get_limited_if_need(get_new(expression, context), engine)
    old_data = get_limited_if_need(get_old(expression, context), engine)
    if old_data is not UNDEFINED:
        return diff(old_data, new_data).deleted


@specs.method
@specs.inject('finalizer', yaqltypes.Delegate('#finalize'))
def is_undef(finalizer, receiver):
    return finalizer(receiver) is UNDEFINED


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
    context.register_function(is_undef, name='isUndef')
    context.register_function(to_yaml)
    context.register_function(to_json)
    return context


