"""Seeds the bench environment over the API: a [role, nodes] environment whose
effective `astute` document at node-1 is ~520 KB and `globals` is ~50 KB."""
import base64
import json
import os
import sys
import urllib.request

BASE = sys.argv[1].rstrip("/") + "/api/v1/config"
# The bench administrator bench.sh starts the server with.
AUTH = "Basic " + base64.b64encode(
    (os.environ["TUNINGBOX_ADMIN_USER"] + ":" + os.environ["TUNINGBOX_ADMIN_PASSWORD"]).encode()).decode()


def call(method, path, body=None, base=BASE):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", "Authorization": AUTH})
    with urllib.request.urlopen(req) as resp:
        raw = resp.read()
        return json.loads(raw) if raw else None


def document(prefix, keys, value_bytes):
    """A Fuel-like document: nested hashes, lists and scalars, about keys*value_bytes bytes."""
    doc = {}
    for i in range(keys):
        doc[f"{prefix}_{i}"] = {
            "enabled": i % 2 == 0,
            "port": 1000 + i,
            "hosts": [f"10.0.{i % 250}.{j}" for j in range(4)],
            "description": ("x" * max(0, value_bytes - 120)),
        }
    return doc


comp = call("POST", "/components", {"name": "bench", "resource_definitions": [
    {"name": "astute"}, {"name": "globals"}]})
call("POST", "/environments", {"id": 1, "components": [comp["id"]], "hierarchy_levels": ["role", "nodes"]})
# The node level takes registered nodes: node-1, a controller.
call("POST", "/api/v1/nodes", {"fqdn": "node-1", "environment_id": 1, "levels": {"role": "controller"}},
     base=sys.argv[1].rstrip("/"))
base = "/environments/1"
node = base + "/role/controller/nodes/node-1"
# astute: ~520 KB effective, spread over global, role and node like a real deployment.
call("PUT", base + "/resources/astute/values", document("g", 1400, 260))
call("PUT", base + "/role/controller/resources/astute/values", document("r", 400, 260))
call("PUT", node + "/resources/astute/values", document("n", 200, 260))
call("PUT", node + "/resources/astute/overrides", {"g_1": {"enabled": False}})
# globals: ~50 KB effective.
call("PUT", base + "/resources/globals/values", document("g", 150, 260))
call("PUT", node + "/resources/globals/values", document("n", 40, 260))
