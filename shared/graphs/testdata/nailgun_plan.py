#!/usr/bin/python3
"""Nailgun's deployment plan for fuel-library tasks, computed independently of tuningbox.

A port of the placement half of Nailgun's LCM serializer (openstack/fuel-web, nailgun/nailgun/lcm/,
nailgun/nailgun/utils/resolvers.py, nailgun/nailgun/yaql_ext/), used as the reference side of a
differential test of tuningbox's Go planner (issue 22). Run with Debian's python3 and python3-yaql:

    /usr/bin/python3 nailgun_plan.py [--summary] [input.json] > plan.json

Input (JSON, stdin or the file named by the first argument):

    {"tasks": [...],              # the graph's tasks as fuel-library writes them (YAML anchors resolved)
     "roles_metadata": {...},     # role -> {"tags": [...]}      (release-metadata.yaml)
     "tags_metadata": {...},      # tag -> {"has_primary": bool}
     "nodes": [{"uid": "1",
                "roles": [...],   # optional, default data["roles"] (astute.yaml: ["primary-controller"])
                "data": {...},    # the node's deployment data (astute.yaml): yaql's $
                "old": {...},     # its data at the last successful run; null or {} = first deployment
                "own": {...}}],   # optional: its own part of the data ($node), default data
     "common": {...},             # optional: the cluster-wide part of the data ($common), default {}
     "master_ip": "10.20.0.2",    # optional: {MASTER_IP}, default each node's data's master_ip
     "master": {"data": {...}, "old": {...}}}   # optional: $ of the tasks placed on the master node

Output (JSON, stdout): see README.md beside this file; in short

    {"nodes": {uid: {"tags", "placed", "run", "bodies": {id: {parameters, fail_on_error}},
                     "skipped": {id: reason}, "strategy", "cross_depends",
                     "cross_depended_by", "requires", "required_for"}},   # uids, "master", "null"
     "fault_tolerance_groups": [...], "unplaced": [...], "errors": [...]}

--summary prints one line per node (placed / run / skipped counts) instead.

Every function below names the fuel-web function it mirrors.
"""

import json
import os
import re
import sys

import yaml
import yaql

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'yaql', 'testdata'))
import nailgun_yaql  # noqa: E402  (Nailgun's yaql extensions, one port for both references)

MASTER_NODE_UID = 'master'    # nailgun/consts.py MASTER_NODE_UID
ALL_ROLES = '*'               # consts.TASK_ROLES.all
SELF_ROLE = 'self'            # consts.TASK_ROLES.self
MASTER_ROLE = 'master'        # consts.TASK_ROLES.master
POLICY_ANY = 'any'            # consts.NODE_RESOLVE_POLICY.any
POLICY_ALL = 'all'
NOOP_TYPES = ('skipped', 'stage')   # lcm/task_serializer.py TasksSerializersFactory.known_types

# nailgun/yaql_ext/__init__.py create_engine
ENGINE_OPTIONS = {
    'yaql.limitIterators': 5000,
    'yaql.memoryQuota': 20000,
    'yaql.convertTuplesToLists': True,
    'yaql.convertSetsToLists': True,
}


# --- nailgun/utils/datadiff.py and nailgun/yaql_ext/: shared with shared/yaql's reference --------

def create_yaql_context():
    """yaql_ext.create_context(add_serializers=True, add_datadiff=True)."""
    return nailgun_yaql.create_context()


# --- nailgun/policy/name_match.py NameMatchingPolicy -----------------------------------------

def name_matcher(pattern):
    """NameMatchingPolicy.create: '/re/' is a regex searched in the name, anything else an exact name."""
    if len(pattern) >= 2 and pattern.startswith('/') and pattern.endswith('/'):
        regex = re.compile(pattern[1:-1])
        return lambda name: regex.search(name) is not None
    return lambda name: name == pattern


def uid_order(uid):
    """Numeric uids in numeric order, before any other (stand-in for Nailgun's set order)."""
    text = str(uid)
    return (0, int(text), '') if text.isdigit() else (1, 0, text)


# --- node tags: objects/node.py Node.all_roles / all_tags with the release's metadata --------

def node_tags(nodes, roles_metadata, tags_metadata):
    """Returns {uid: set of tags}, primary tags already renamed primary-<tag>.

    A role R gives roles_metadata[R].tags (a role without metadata is its own tag). astute.yaml
    names the primary node's role primary-R: that node is the primary of R's has_primary tags.
    Each has_primary tag has one primary in the cluster (objects/cluster.py set_primary_tag): the
    recorded one is kept (here: the lowest-uid node carrying it through a primary-R role), else the
    lowest-id node carrying it (Nailgun prefers a 'ready' one; nodes here have no status).
    The primary carries primary-T instead of T (Node.all_roles: roles -= primary_roles).
    """
    plain = {}          # uid -> tags before primaries
    claimed = {}        # uid -> tags claimed primary by a primary-R role
    for node in nodes:
        uid = node['uid']
        plain[uid], claimed[uid] = set(), set()
        for role in node['roles']:
            base, is_primary = role, False
            if role.startswith('primary-') and role not in roles_metadata:
                base, is_primary = role[len('primary-'):], True
            if base in roles_metadata:
                tags = set(roles_metadata[base].get('tags') or [base])
            elif is_primary:
                plain[uid].add(role)       # unknown role named primary-R: a literal tag
                continue
            else:
                tags = {base}
            plain[uid] |= tags
            if is_primary:
                claimed[uid] |= {t for t in tags if tags_metadata.get(t, {}).get('has_primary')}
    result = {uid: set(tags) for uid, tags in plain.items()}
    for tag, meta in tags_metadata.items():
        if not meta.get('has_primary'):
            continue
        carriers = sorted((uid for uid in plain if tag in plain[uid]), key=uid_order)
        if not carriers:
            continue
        claimers = [uid for uid in carriers if tag in claimed[uid]]
        primary = (claimers or carriers)[0]
        result[primary].discard(tag)
        result[primary].add('primary-' + tag)
    return result


class TagResolver(object):
    """utils/resolvers.py TagResolver."""

    def __init__(self, tags_by_uid):
        self.mapping = {}
        for uid, tags in tags_by_uid.items():
            for tag in tags:
                self.mapping.setdefault(tag, set()).add(uid)

    def resolve(self, roles, policy=None):
        if roles == ALL_ROLES:
            result = {uid for uids in self.mapping.values() for uid in uids}
        else:
            result = set()
            if isinstance(roles, str):
                roles = [roles]
            if not isinstance(roles, (list, tuple, set)):
                return result   # Nailgun: 'Wrong roles format' warning, no node
            for role in roles:
                if role == MASTER_ROLE:
                    result.add(MASTER_NODE_UID)
                elif role == ALL_ROLES:
                    # Deviation: Nailgun stores role '*' as roles ['*'] and matches '*' exactly.
                    result |= {uid for uids in self.mapping.values() for uid in uids}
                else:
                    match = name_matcher(role)
                    for tag, uids in self.mapping.items():
                        if match(tag):
                            result |= uids
        if result and policy == POLICY_ANY:
            # Nailgun: {next(iter(result))}, an arbitrary node; here the lowest uid.
            result = {min(result, key=uid_order)}
        return result


# --- task templates as Nailgun stores and serves them -----------------------------------------

def stored_task(task):
    """objects/deployment_graph.py DeploymentGraphTask.create + serializers DeploymentGraphTaskSerializer.

    role/groups strings are wrapped in lists, role -> roles, cross-depends -> cross_depends,
    cross-depended-by -> cross_depended_by. The serializer drops the falsy values of its table
    columns (STORED_COLUMNS); the other fields (tags, fault_tolerance, ...) come back as written.
    """
    rename = {'role': 'roles', 'cross-depends': 'cross_depends', 'cross-depended-by': 'cross_depended_by'}
    result = {}
    for key, value in task.items():
        if key in ('role', 'groups') and isinstance(value, str):
            value = [value]
        key = rename.get(key, key)
        if key in STORED_COLUMNS and not value:
            continue
        result[key] = value
    return result


STORED_COLUMNS = frozenset((
    'version', 'condition', 'type', 'groups', 'tasks', 'roles', 'reexecute_on', 'refresh_on',
    'required_for', 'requires', 'cross_depended_by', 'cross_depends', 'parameters'))


# --- lcm/task_serializer.py ---------------------------------------------------------------

class PlanError(Exception):
    pass


class Context(object):
    """task_serializer.Context: yaql's $ = $%new, $%old, $node and $common per node
    (get_yaql_interpreter), and the placeholders strings are formatted with (get_formatter_context)."""

    def __init__(self, data_by_uid, old_by_uid, own_by_uid=None, common=None, master_ip=None):
        self.data = data_by_uid
        self.old = old_by_uid
        self.own = own_by_uid or {}
        self.common = common or {}
        self.master_ip = master_ip
        self.root = create_yaql_context()
        self.engine = yaql.YaqlFactory().create(ENGINE_OPTIONS)
        self.cache = {}

    def interpreter(self, uid):
        context = self.root.create_child_context()
        context['$%new'] = self.data.get(uid, {})
        context['$%old'] = self.old.get(uid) or {}
        context['$node'] = self.own.get(uid, self.data.get(uid, {}))
        context['$common'] = self.common
        context['$'] = context['$%new']

        def evaluate(expression):
            parsed = self.cache.get(expression)
            if parsed is None:
                parsed = self.cache[expression] = self.engine(expression)
            return parsed.evaluate(context=context)
        return evaluate

    def formatter_context(self, uid):
        """get_formatter_context. A value the data lacks is left out (Nailgun formatted it as "None";
        tuningbox leaves such a placeholder as written), and so is SETTINGS (Nailgun's own settings)."""
        data = self.data.get(uid, {})
        context = {
            'CLUSTER_ID': data.get('cluster', {}).get('id'),
            'OPENSTACK_VERSION': data.get('openstack_version'),
            'MASTER_IP': self.master_ip or data.get('master_ip'),
            'CN_HOSTNAME': data.get('public_ssl', {}).get('hostname'),
        }
        return {k: v for k, v in context.items() if v is not None}


def text_format_safe(data, context):
    """utils.text_format_safe: str.format, or the string as it is when it cannot be formatted."""
    try:
        return data.format(**context)
    except Exception:
        return data


def traverse(data, keywords, formatter_context=None):
    """utils.traverse: a mapping holding a keyword (yaql_exp) is replaced by the keyword's value,
    strings are formatted with formatter_context, values under a key named regex are left as they are."""
    if isinstance(data, dict):
        for keyword, handler in keywords.items():
            if keyword in data:
                return handler(data[keyword])
        return {key: value if key == 'regex' else traverse(value, keywords, formatter_context)
                for key, value in data.items()}
    if isinstance(data, list):
        return [traverse(item, keywords, formatter_context) for item in data]
    if isinstance(data, str) and formatter_context:
        return text_format_safe(data, formatter_context)
    return data


SERIALIZED_FIELDS = frozenset((
    'id', 'type', 'parameters', 'fail_on_error', 'requires', 'required_for',
    'cross_depends', 'cross_depended_by'))   # DeploymentTaskSerializer.fields


def serialize_task(context, template, uid):
    """DeploymentTaskSerializer.serialize + NoopTaskSerializer / DefaultTaskSerializer.finalize.

    Returns (serialized task, reason it is skipped or None).
    """
    interpret = context.interpreter(uid)

    def evaluate(expression):
        try:
            return interpret(expression)
        except Exception as e:
            raise PlanError('yaql %r: %s: %s' % (expression.strip(), type(e).__name__, e))

    task = traverse(template, {'yaql_exp': evaluate}, context.formatter_context(uid))
    reason = None
    if task['type'] in NOOP_TYPES:
        reason = 'stage' if task['type'] == 'stage' else 'skipped_type'
    else:
        condition = task.get('condition', True)
        if isinstance(condition, str):
            raise PlanError('legacy (non-yaql) condition %r is not supported' % condition)
        if not condition:
            reason = 'condition'
    if reason is not None:
        task.pop('parameters', None)
        task['type'] = 'skipped'
        task['fail_on_error'] = False
    else:
        task.setdefault('parameters', {}).setdefault('cwd', '/')
        task.setdefault('fail_on_error', True)
    serialized = {k: v for k, v in task.items() if k in SERIALIZED_FIELDS}
    return serialized, reason


# --- lcm/transaction_serializer.py TransactionSerializer ---------------------------------------

def calculate_fault_tolerance(percentage_or_value, total):
    """TransactionSerializer.calculate_fault_tolerance."""
    if percentage_or_value is None:
        return total + 1
    if isinstance(percentage_or_value, str):
        percentage_or_value = percentage_or_value.strip()
    try:
        if isinstance(percentage_or_value, str) and percentage_or_value[-1] == '%':
            value = (int(percentage_or_value[:-1]) * total) // 100
        else:
            value = int(percentage_or_value)
        if value < 0:
            value = max(0, total + value)
        return value
    except (ValueError, IndexError):
        return total + 1


def placement_roles(task):
    """task.get('tags', task.get('roles', task.get('groups'))) of expand_tasks / resolve_nodes."""
    return task.get('tags', task.get('roles', task.get('groups')))


class TransactionSerializer(object):
    def __init__(self, context, resolver):
        self.context = context
        self.resolver = resolver
        self.tasks_graph = {}          # uid -> {task id: serialized task}
        self.skipped = {}              # uid -> {task id: reason}
        self.evaluated = {}            # uid -> {task id: {cross_depends, cross_depended_by, strategy}}
        self.fault_tolerance_groups = []
        self.errors = []
        self.unplaced = set()

    def expand_tasks(self, tasks):
        """TransactionSerializer.expand_tasks: plain tasks first, then the tasks of each group."""
        groups, tasks_mapping = [], {}
        for task in tasks:
            if task.get('type') == 'group':
                groups.append(task)
                continue
            tasks_mapping[task['id']] = task
            node_ids = self.resolve_nodes(task)
            if not node_ids:
                self.unplaced.add(task['id'])
            for uid in sorted(node_ids, key=uid_order):
                yield uid, task
        for group in groups:
            node_ids = self.resolver.resolve(placement_roles(group))
            if not node_ids:
                continue
            for sub_task_id in group.get('tasks', ()):
                if sub_task_id not in tasks_mapping:
                    raise PlanError('Task %s cannot be resolved' % sub_task_id)
                self.unplaced.discard(sub_task_id)
                for uid in sorted(node_ids, key=uid_order):
                    yield uid, tasks_mapping[sub_task_id]
            self.fault_tolerance_groups.append({
                'name': group['id'],
                'node_ids': sorted(node_ids, key=uid_order),
                'fault_tolerance': calculate_fault_tolerance(group.get('fault_tolerance'), len(node_ids)),
            })

    def resolve_nodes(self, task):
        if task.get('type') == 'stage':
            return {None}      # all synchronisation points live on the sync node
        return self.resolver.resolve(placement_roles(task))

    def process_tasks(self, tasks):
        """TransactionSerializer.process_tasks with need_update_task's de-duplication."""
        for uid, template in self.expand_tasks(tasks):
            try:
                task, reason = serialize_task(self.context, template, uid)
            except PlanError as e:
                self.errors.append({'node': uid, 'task': template['id'], 'error': str(e)})
                # keep the dependencies that need no evaluation, so the order through the task holds
                task = {k: v for k, v in template.items()
                        if k in ('requires', 'required_for') or (k in ('cross_depends', 'cross_depended_by')
                                                                 and isinstance(v, list))}
                task.update(id=template['id'], type='skipped')
                reason = 'error'
            node_tasks = self.tasks_graph.setdefault(uid, {})
            if not self.need_update_task(node_tasks, task):
                continue
            node_tasks[task['id']] = task
            self.skipped.setdefault(uid, {}).pop(task['id'], None)
            if reason is not None:
                self.skipped[uid][task['id']] = reason
            evaluated = {k: task[k] for k in ('cross_depends', 'cross_depended_by') if k in task}
            strategy = task.get('parameters', {}).get('strategy')
            if strategy is not None:
                evaluated['strategy'] = strategy
            self.evaluated.setdefault(uid, {})[task['id']] = evaluated
        self.tasks_graph.setdefault(None, {})

    @staticmethod
    def need_update_task(tasks, task):
        existing = tasks.get(task['id'])
        if existing is None:
            return True
        if existing['type'] == task['type']:
            return False
        return task['type'] != 'skipped'

    def resolve_dependencies(self):
        """TransactionSerializer.resolve_dependencies: requires + cross_depends, required_for + cross_depended_by."""
        edges = {}
        for uid, tasks in self.tasks_graph.items():
            for task_id, task in tasks.items():
                requires = set(self.expand_dependencies(uid, task.get('requires')))
                requires.update(self.expand_cross_dependencies(task_id, uid, task.get('cross_depends')))
                required_for = set(self.expand_dependencies(uid, task.get('required_for')))
                required_for.update(
                    self.expand_cross_dependencies(task_id, uid, task.get('cross_depended_by')))
                edges.setdefault(uid, {})[task_id] = (requires, required_for)
        return edges

    def expand_dependencies(self, uid, dependencies):
        if not dependencies:
            return
        for name in dependencies:
            for relation in self.resolve_relation(name, [uid, None]):
                yield relation

    def expand_cross_dependencies(self, task_id, uid, dependencies):
        if not dependencies:
            return
        if not isinstance(dependencies, list):
            raise PlanError('cross dependencies of %s on %s are not a list: %r' % (task_id, uid, dependencies))
        for dep in filter(None, dependencies):
            roles = dep.get('tags', dep.get('role', ALL_ROLES))
            if roles == SELF_ROLE:
                node_ids, excludes = [uid], []
            elif roles is None:
                node_ids, excludes = [None], []
            else:
                node_ids = sorted(self.resolver.resolve(roles, dep.get('policy', POLICY_ALL)), key=uid_order)
                excludes = [(task_id, uid)]
            for relation in self.resolve_relation(dep['name'], node_ids, excludes):
                yield relation

    def resolve_relation(self, name, node_ids, excludes=None):
        match = name_matcher(name)
        for uid in node_ids:
            for task_name in self.tasks_graph.get(uid, ()):
                if excludes and (task_name, uid) in excludes:
                    continue
                if match(task_name):
                    yield task_name, uid


# --- plan ----------------------------------------------------------------------------------

def node_key(uid):
    return 'null' if uid is None else str(uid)


def edge_list(pairs):
    return sorted(([name, uid] for name, uid in pairs), key=lambda p: (p[0], p[1] is not None, uid_order(p[1])))


def node_entry(tags, tasks, skipped):
    run = sorted(t for t in tasks if t not in skipped)
    return {
        'tags': sorted(tags),
        'placed': sorted(tasks),
        'run': run,
        # what the node's agent gets of each task it runs (DeploymentTaskSerializer.serialize)
        'bodies': {t: {k: tasks[t][k] for k in ('parameters', 'fail_on_error') if k in tasks[t]} for t in run},
        'skipped': dict(sorted(skipped.items())),
        'strategy': {},
        'cross_depends': {},
        'cross_depended_by': {},
        'requires': {},
        'required_for': {},
    }


def plan(spec):
    nodes = []
    for node in spec['nodes']:
        uid = str(node['uid'])
        roles = node.get('roles')
        if roles is None:
            roles = (node.get('data') or {}).get('roles') or []
        nodes.append({'uid': uid, 'roles': list(roles)})
    tags = node_tags(nodes, spec.get('roles_metadata') or {}, spec.get('tags_metadata') or {})
    master = spec.get('master') or {}
    data = {str(n['uid']): n.get('data') or {} for n in spec['nodes']}
    old = {str(n['uid']): n.get('old') or {} for n in spec['nodes']}
    data[MASTER_NODE_UID], old[MASTER_NODE_UID] = master.get('data') or {}, master.get('old') or {}
    data[None], old[None] = {}, {}

    own = {str(n['uid']): n['own'] for n in spec['nodes'] if 'own' in n}
    context = Context(data, old, own, spec.get('common'), spec.get('master_ip'))
    serializer = TransactionSerializer(context, TagResolver(tags))
    serializer.process_tasks([stored_task(t) for t in spec['tasks']])
    edges = serializer.resolve_dependencies()

    out_nodes = {node['uid']: node_entry(tags[node['uid']], {}, {}) for node in nodes}
    for uid, tasks in serializer.tasks_graph.items():
        skipped = serializer.skipped.get(uid, {})
        evaluated = serializer.evaluated.get(uid, {})
        entry = out_nodes[node_key(uid)] = node_entry(tags.get(uid, ()), tasks, skipped)
        for task_id in sorted(tasks):
            values = evaluated.get(task_id, {})
            if 'strategy' in values and task_id not in skipped:
                entry['strategy'][task_id] = values['strategy']
            for key in ('cross_depends', 'cross_depended_by'):
                if key in values:
                    entry[key][task_id] = values[key]
            requires, required_for = edges[uid][task_id]
            if requires:
                entry['requires'][task_id] = edge_list(requires)
            if required_for:
                entry['required_for'][task_id] = edge_list(required_for)
    return {
        'nodes': dict(sorted(out_nodes.items(), key=lambda kv: uid_order(kv[0]))),
        'fault_tolerance_groups': serializer.fault_tolerance_groups,
        'unplaced': sorted(serializer.unplaced),
        'errors': serializer.errors,
    }


def summary(result):
    """One line per node (placed / run / skipped), for people comparing plans by eye."""
    lines = ['%-8s %6s %4s %7s' % ('node', 'placed', 'run', 'skipped')]
    for uid, node in result['nodes'].items():
        lines.append('%-8s %6d %4d %7d' % (uid, len(node['placed']), len(node['run']), len(node['skipped'])))
    lines.append('unplaced %d, errors %d' % (len(result['unplaced']), len(result['errors'])))
    return '\n'.join(lines) + '\n'


def main(argv):
    args = argv[1:]
    brief = '--summary' in args
    args = [a for a in args if a != '--summary']
    if args:
        with open(args[0]) as f:
            spec = json.load(f)
    else:
        spec = json.load(sys.stdin)
    result = plan(spec)
    if brief:
        sys.stdout.write(summary(result))
        return
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main(sys.argv)
