#!/usr/bin/python3
"""Builds nailgun_plan.py's input for the shared Fuel cluster (issue 22).

Nodes: the three real nodes of testdata/fuel/hiera/ (ceph-osd uid 100, compute 102,
primary-controller 103) plus a non-primary controller, uid 104: a copy of the primary
controller's data with uid "104" and roles ["controller"]. Each node's data is also given split
as Nailgun split it: "common" (the top-level keys every node has with the same value: $common)
and each node's "own" part ($node). The master node's data is the
primary controller's data with uid "master" and roles ["master"] (Nailgun's DeploymentLCMSerializer
gives the master {uid: master, roles: [master]} over the cluster's common attributes; the
node-specific keys left in the copy are not read by the master's tasks).

--old selects the data of the last successful run (yaql's $%old):
  first   none (first deployment: old = {})
  same    the same data (a re-run with nothing changed)
  glance  the same data, except that the operator has since changed the glance settings of the
          controllers (103, 104) and so of the master: their current data has
          glance.image_cache_max_size changed, their old data is the original
--force drops the old data (an execution with force): every condition sees a first deployment.

Fuel's files are read from --fuel DIR, by default testdata/fuel at the repository root.

    /usr/bin/python3 nailgun_cluster.py --old first | /usr/bin/python3 nailgun_plan.py
"""

import argparse
import copy
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


DEFAULT_FUEL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), 'testdata', 'fuel')

HIERA_FILES = ('neut_vlan.ceph-ceph-osd.yaml', 'neut_vlan.ceph-compute.yaml',
               'neut_vlan.ceph-primary-controller.yaml')
EXTRA_CONTROLLER_UID = '104'
CONTROLLER_UIDS = ('103', EXTRA_CONTROLLER_UID)


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def change_glance(data):
    changed = copy.deepcopy(data)
    glance = changed.setdefault('glance', {})
    glance['image_cache_max_size'] = str(int(glance.get('image_cache_max_size') or 0) + 1073741824)
    return changed


def split_common(datas):
    """The cluster-wide part of the nodes' data (Nailgun's common attributes, a task's $common):
    the top-level keys every node has with the same value."""
    first, rest = datas[0], datas[1:]
    return {k: v for k, v in first.items() if all(k in d and d[k] == v for d in rest)}


def own_part(data, common):
    """A node's own part of its data ($node): what the common part does not hold as it is."""
    return {k: v for k, v in data.items() if k not in common or common[k] != v}


def build(fuel, graph, old_state, force=False):
    metadata = load_yaml(os.path.join(fuel, 'release', 'release-metadata.yaml'))
    tasks = load_yaml(os.path.join(fuel, 'release', 'tasks-%s.yaml' % graph))

    datas = [load_yaml(os.path.join(fuel, 'hiera', name)) for name in HIERA_FILES]
    primary = next(d for d in datas if 'primary-controller' in d['roles'])
    extra = copy.deepcopy(primary)
    extra['uid'] = EXTRA_CONTROLLER_UID
    extra['roles'] = ['controller']
    datas.append(extra)
    common = split_common(datas)
    master = copy.deepcopy(primary)
    master['uid'] = 'master'
    master['roles'] = ['master']

    def with_old(uid, current):
        if old_state == 'glance' and (uid in CONTROLLER_UIDS or uid == 'master'):
            new, old = change_glance(current), current
        else:
            new, old = current, current
        if old_state == 'first' or force:
            return new, None
        return new, old

    nodes = []
    for data in sorted(datas, key=lambda d: int(d['uid'])):
        uid = str(data['uid'])
        new, old = with_old(uid, data)
        nodes.append({'uid': uid, 'roles': list(new['roles']), 'data': new, 'old': old,
                      'own': own_part(new, common)})
    master_new, master_old = with_old('master', master)
    return {
        'tasks': tasks,
        'roles_metadata': metadata['roles_metadata'],
        'tags_metadata': metadata['tags_metadata'],
        'nodes': nodes,
        'common': common,
        'master': {'data': master_new, 'old': master_old},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--old', choices=('first', 'same', 'glance'), default='first')
    parser.add_argument('--graph', choices=('default', 'provision', 'deletion'), default='default')
    parser.add_argument('--force', action='store_true', help='no old data, as an execution with force plans')
    parser.add_argument('--fuel', default=DEFAULT_FUEL, help='default: testdata/fuel at the repository root')
    args = parser.parse_args()
    json.dump(build(args.fuel, args.graph, args.old, args.force), sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
