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
import json
import os
import sys

import yaml
import yaql

import nailgun_yaql

# nailgun/yaql_ext/__init__.py, but for the memory quota: Nailgun's 20,000 bytes of
# sys.getsizeof are CPython's own measure (tuningbox bounds an evaluation by its own
# step and value budgets instead), and two of the release's expressions exceed it.
ENGINE_OPTIONS = {
    'yaql.limitIterators': 5000,
    'yaql.convertTuplesToLists': True,
    'yaql.convertSetsToLists': True,
}

UNDEFINED_JSON = {'$yaql': 'undefined'}


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
    if value is nailgun_yaql.UNDEFINED:
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
    base = nailgun_yaql.create_context()
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
