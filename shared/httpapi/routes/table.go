package routes

import (
	"net/http"
	"strings"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// The endpoint groups: each is one Lambda function (infra) and one set of
// services in the local binary (shared/app).
const (
	GroupConfig    = "config"
	GroupGraphs    = "graphs"
	GroupTemplates = "templates"
	GroupAuth      = "auth"
	// GroupWatch is the config watchers' long polls (config.documents.watch):
	// a path of their own, so that API Gateway sends them to a function and a
	// concurrency pool apart from the Hiera reads of the same documents.
	GroupWatch = "watch"
)

// Paths shared by the table, the handlers and the policy.
const (
	// VersionsPath is the public microversion document.
	VersionsPath = "/api/v1/config"
	// DocumentPath is the public OpenAPI document.
	DocumentPath = "/api/v1/openapi.json"
	// MetricsPath is the process's metrics, where Prometheus looks for them
	// (the one path outside /api/v1).
	MetricsPath = "/metrics"
	// ConsolePrefix is the operators' console (shared/httpapi/console), whose
	// page and files are at ConsolePath.
	ConsolePrefix = "/ui"
	ConsolePath   = ConsolePrefix + "/{file...}"
	config        = "/api/v1/config"
	// docPath is a ConfigDB document's path at the global level (Route.Levels).
	docPath = config + "/environments/{env}/resources/{resource...}"
	// WatchPrefix is the watchers' paths: watchDocPath is docPath under it,
	// the same read routed apart by its first segments.
	WatchPrefix  = "/api/v1/watch"
	watchDocPath = WatchPrefix + "/config/environments/{env}/resources/{resource...}"
)

// Status lists.
var (
	ok        = []int{http.StatusOK}
	created   = []int{http.StatusCreated}
	noContent = []int{http.StatusNoContent}
	accepted  = []int{http.StatusAccepted}
)

// Query parameters used by several routes.
var (
	limit  = Param{Name: "limit", Type: Integer, Description: "At most this many items."}
	marker = Param{Name: "marker", Type: String, Description: "The last item of the previous page (its UUID)."}
	// nodeLimit pages a listing by node; a page is also cut where it would pass 5 MiB.
	nodeLimit     = Param{Name: "limit", Type: Integer, Description: "At most this many nodes per page (a page is also cut before 5 MiB)."}
	graphType     = Param{Name: "graph_type", Type: String, Description: "The graph type (default: \"default\")."}
	validateGraph = Param{Name: "validate", Type: Flag, Description: "Check the graph (cycles, unknown dependencies) without storing it when it is invalid."}
	dryRun        = Param{Name: "dry_run", Type: Flag, Description: "Answer the version the write would create and the nodes whose effective document it would change, storing nothing.", Since: httpapi.V1_3}
)

// documentQuery are the parameters of a document read (spec 000, and microversion 1.3's merge, explain, as_of and wait).
var documentQuery = []Param{
	{Name: "effective", Type: Flag, Description: "The effective document: every level above the path merged, tuning-box's ?effective."},
	{Name: "show_lookup", Type: Flag, Description: "With ?effective: which level each key came from."},
	{Name: "key", Type: String, Description: "Only this key of the document (dotted path)."},
	{Name: "version", Type: Integer, Description: "This version of the document instead of the newest."},
	{Name: "merge", Type: String, Description: "Merge mode of ?effective: \"replace\" (tuning-box's) or \"deep\".", Since: httpapi.V1_3},
	{Name: "explain", Type: Flag, Description: "With ?effective, each key's winning layer with its version and writer.", Since: httpapi.V1_3},
	{Name: "as_of", Type: DateTime, Description: "The document as it was at this RFC 3339 instant.", Since: httpapi.V1_3},
	{Name: "wait", Type: Seconds, Description: "With If-None-Match, hold the read up to this many seconds (at most 25) until the document changes.", Since: httpapi.V1_3},
}

// Table is every route of the API, declared once.
var Table = buildTable()

func buildTable() []Route {
	t := []Route{
		{ID: "versions", Method: "GET", Path: VersionsPath, Slash: true, Group: GroupConfig, Access: Public,
			Summary: "The microversion document: the supported API version range.", Response: "Versions"},
		{ID: "openapi", Method: "GET", Path: DocumentPath, Group: GroupConfig, Access: Public,
			Summary: "This OpenAPI document.", Response: "OpenAPI"},
		{ID: "metrics", Method: "GET", Path: MetricsPath, Group: GroupConfig, Access: Read,
			Summary:  "This process's metrics in Prometheus text format. Not on Lambda: API Gateway routes no /metrics, and the functions write their metrics as CloudWatch EMF lines (their GET /metrics is a 404).",
			Response: "Text", ContentType: "text/plain"},

		{ID: "config.components.list", Method: "GET", Path: config + "/components", Group: GroupConfig, Access: Read, Summary: "List components.", Response: "Components"},
		{ID: "config.components.create", Method: "POST", Path: config + "/components", Group: GroupConfig, Access: Write, Summary: "Create a component with its resource definitions.", Request: "NewComponent", Response: "Component", Status: created},
		{ID: "config.components.get", Method: "GET", Path: config + "/components/{id}", Group: GroupConfig, Access: Read, Summary: "Show a component (by id, UUID or name).", Response: "Component"},
		{ID: "config.components.update", Method: "PUT", Path: config + "/components/{id}", Group: GroupConfig, Access: Write, Summary: "Rename a component.", Request: "ComponentUpdate", Status: noContent},
		{ID: "config.components.patch", Method: "PATCH", Path: config + "/components/{id}", Group: GroupConfig, Access: Write, Summary: "Rename a component (as PUT).", Request: "ComponentUpdate", Status: noContent},
		{ID: "config.components.delete", Method: "DELETE", Path: config + "/components/{id}", Group: GroupConfig, Access: Write, Summary: "Delete a component.", Status: noContent},

		{ID: "config.definitions.list", Method: "GET", Path: config + "/resource_definitions", Group: GroupConfig, Access: Read, Summary: "List resource definitions.", Response: "ResourceDefinitions",
			Query: []Param{{Name: "component_id", Type: String, Description: "Only the definitions of this component."}}},
		{ID: "config.definitions.create", Method: "POST", Path: config + "/resource_definitions", Group: GroupConfig, Access: Write, Summary: "Create a resource definition.", Request: "NewResourceDefinition", Response: "ResourceDefinition", Status: created},
		{ID: "config.definitions.get", Method: "GET", Path: config + "/resource_definitions/{ref...}", Group: GroupConfig, Access: Read, Summary: "Show a resource definition (by id, UUID or component/name).", Response: "ResourceDefinition"},
		{ID: "config.definitions.update", Method: "PUT", Path: config + "/resource_definitions/{ref...}", Group: GroupConfig, Access: Write, Summary: "Replace a resource definition's name or content.", Request: "ResourceDefinitionUpdate", Status: noContent},
		{ID: "config.definitions.patch", Method: "PATCH", Path: config + "/resource_definitions/{ref...}", Group: GroupConfig, Access: Write, Summary: "Change a resource definition's name or content, or set or delete keys of its content (…/keys/set, …/keys/delete: a list).", Request: "DefinitionPatch", Status: noContent},
		{ID: "config.definitions.delete", Method: "DELETE", Path: config + "/resource_definitions/{ref...}", Group: GroupConfig, Access: Write, Summary: "Delete a resource definition.", Status: noContent},

		{ID: "config.environments.list", Method: "GET", Path: config + "/environments", Group: GroupConfig, Access: Read, Summary: "List environments.", Response: "Environments"},
		{ID: "config.environments.create", Method: "POST", Path: config + "/environments", Group: GroupConfig, Access: Write, Summary: "Create an environment with its components and hierarchy levels.", Request: "NewEnvironment", Response: "Environment", Status: created},
		{ID: "config.environments.get", Method: "GET", Path: config + "/environments/{env}", Group: GroupConfig, Access: Read, Summary: "Show an environment.", Response: "Environment"},
		{ID: "config.environments.update", Method: "PUT", Path: config + "/environments/{env}", Group: GroupConfig, Access: Write, Summary: "Change an environment's components or hierarchy levels.", Request: "EnvironmentUpdate", Status: noContent},
		{ID: "config.environments.patch", Method: "PATCH", Path: config + "/environments/{env}", Group: GroupConfig, Access: Write, Summary: "Change an environment (as PUT).", Request: "EnvironmentUpdate", Status: noContent},
		{ID: "config.environments.delete", Method: "DELETE", Path: config + "/environments/{env}", Group: GroupConfig, Access: Write, Summary: "Delete an environment, its documents and its graphs.", Status: noContent},
		{ID: "config.levels.list", Method: "GET", Path: config + "/environments/{env}/hierarchy_levels", Group: GroupConfig, Access: Read, Summary: "List an environment's hierarchy levels.", Response: "HierarchyLevels"},
		{ID: "config.levels.get", Method: "GET", Path: config + "/environments/{env}/hierarchy_levels/{level}", Group: GroupConfig, Access: Read, Summary: "Show a hierarchy level.", Response: "HierarchyLevel"},
		{ID: "config.levels.update", Method: "PUT", Path: config + "/environments/{env}/hierarchy_levels/{level}", Group: GroupConfig, Access: Write, Summary: "Rename a hierarchy level.", Request: "LevelRename", Status: noContent},
		{ID: "config.levels.patch", Method: "PATCH", Path: config + "/environments/{env}/hierarchy_levels/{level}", Group: GroupConfig, Access: Write, Summary: "Rename a hierarchy level (as PUT).", Request: "LevelRename", Status: noContent},
		{ID: "config.documents.versions", Method: "GET", Path: docPath + "/{kind}/versions", Levels: true, Group: GroupConfig, Access: Read, Node: NodeOwnDocument,
			Summary: "List the versions of a values or overrides document, oldest first.", Response: "DocumentVersions"},
		{ID: "config.documents.history", Method: "GET", Path: docPath + "/{kind}/history", Levels: true, Group: GroupConfig, Access: Read, Since: httpapi.V1_3,
			Summary: "List the versions of a values or overrides document in which the value at a key changed, newest first, with their writers and the old and new values.", Response: "KeyHistory",
			Query: []Param{
				{Name: "key", Type: String, Description: "The key (dotted path), required."},
				{Name: "before", Type: Integer, Description: "Only the versions older than this one: the before of the previous page."},
				{Name: "limit", Type: Integer, Description: "At most this many changes (default 20, at most 100)."},
			}},
		{ID: "config.documents.effective", Method: "GET", Path: docPath + "/{kind}", Levels: true, When: "effective", Group: GroupConfig, Access: Read, Node: NodeOwnDocument,
			Summary: "Read the effective document (?effective): the document of every level from the global one down to the path merged, the narrower level winning; Hiera's read.", Response: "EffectiveDocument", Query: documentQuery},
		{ID: "config.documents.watch", Method: "GET", Path: watchDocPath + "/{kind}", Levels: true, Group: GroupWatch, Access: Read, Node: NodeOwnDocument, Since: httpapi.V1_3,
			Summary:  "Watch a document: the read of its path without " + WatchPrefix + " (plain, or ?effective), answered the same way (ETag, If-None-Match, ?wait=), on a path of its own that API Gateway routes to the watchers' function and pool.",
			Response: "EffectiveDocument", Query: documentQuery},
		{ID: "config.values.get", Method: "GET", Path: docPath + "/values", Levels: true, Group: GroupConfig, Access: Read, Node: NodeOwnDocument,
			Summary: "Read the values document stored at a level path (without ?effective).", Response: "Document", Query: documentQuery},
		{ID: "config.values.put", Method: "PUT", Path: docPath + "/values", Levels: true, Group: GroupConfig, Access: Write,
			Summary: "Replace the values document at a level path: a new version.", Request: "Document", Response: "Preview", Status: []int{http.StatusNoContent, http.StatusOK}, Query: []Param{dryRun}},
		{ID: "config.overrides.get", Method: "GET", Path: docPath + "/overrides", Levels: true, Group: GroupConfig, Access: Read, Node: NodeOwnDocument,
			Summary: "Read the overrides document stored at a level path (without ?effective).", Response: "Document", Query: documentQuery},
		{ID: "config.overrides.put", Method: "PUT", Path: docPath + "/overrides", Levels: true, Group: GroupConfig, Access: Write,
			Summary: "Replace the overrides document at a level path: a new version.", Request: "Document", Response: "Preview", Status: []int{http.StatusNoContent, http.StatusOK}, Query: []Param{dryRun}},
		{ID: "config.keys.set", Method: "PATCH", Path: docPath + "/{kind}/keys/set", Levels: true, Group: GroupConfig, Access: Write,
			Summary: "Set keys of a document: a new version. Every key before the last must exist (409) until microversion 1.4, which creates the missing objects.", Request: "KeyOps", Response: "Preview", Status: []int{http.StatusNoContent, http.StatusOK}, Query: []Param{dryRun}},
		{ID: "config.keys.delete", Method: "PATCH", Path: docPath + "/{kind}/keys/delete", Levels: true, Group: GroupConfig, Access: Write,
			Summary: "Delete keys of a document: a new version.", Request: "KeyOps", Response: "Preview", Status: []int{http.StatusNoContent, http.StatusOK}, Query: []Param{dryRun}},
		{ID: "config.diff", Method: "POST", Path: config + "/diff", Group: GroupConfig, Access: Read, Summary: "Compare two documents or versions; changes nothing.", Request: "DiffRequest", Response: "Diff"},
		{ID: "config.overrides.apply", Method: "POST", Path: config + "/overrides/apply", Group: GroupConfig, Access: Read, Summary: "Apply Puppet resource overrides to a catalog (spec 001); changes nothing.", Request: "OverridesRequest", Response: "OverridesResult"},
		{ID: "console", Method: "GET", Path: ConsolePath, Group: GroupConfig, Access: Public, Response: "Text", ContentType: "text/*",
			Summary: "The operators' console (read-only; it logs in through POST /api/v1/sessions): its page (text/html) for any view's path, its scripts, style sheets and licenses by name."},
		{ID: "store.gc", Method: "POST", Path: "/api/v1/store/gc", Group: GroupConfig, Access: Admin, Summary: "Sweep unreferenced blobs.", Response: "GCReport",
			Query: []Param{{Name: "min_age", Type: String, Description: "Keep blobs younger than this duration (such as 30m or 2h)."}}},
		{ID: "store.backup", Method: "GET", Path: "/api/v1/store/backup", Group: GroupConfig, Access: Admin,
			Summary:  "A consistent copy of the embedded store's database file, taken while it serves (404 on AWS, where point-in-time recovery and S3 versioning are the backup).",
			Response: "Text", ContentType: "application/octet-stream", EmbeddedOnly: true},
		{ID: "store.environments.export", Method: "GET", Path: "/api/v1/store/environments/{env}/export", Group: GroupConfig, Access: Admin,
			Summary:  "Export an environment: its levels, components, definitions, nodes, what its cluster deploys with (release, plugins, graphs), its deploy templates and every document with its whole history, as JSON lines (shared/envexport).",
			Response: "Text", ContentType: "application/x-ndjson"},
		{ID: "store.environments.import", Method: "POST", Path: "/api/v1/store/environments/import", Group: GroupConfig, Access: Admin,
			Summary: "Import an environment export (JSON lines, or gzip-compressed), all or nothing: a cut-short, foreign or newer-format file is a 400 and nothing is imported.",
			Request: "Text", RequestTypes: []string{"application/x-ndjson", "application/gzip"}, Response: "EnvironmentImport", Status: created},
	}
	for i := range t {
		t[i].FirstOfRepeated = strings.HasPrefix(t[i].ID, "config.") // the ConfigDB's tuning-box routes
	}
	t = append(t, graphRoutes()...)
	t = append(t, templateRoutes()...)
	return append(t, authRoutes()...)
}

func graphRoutes() []Route {
	const base = "/api/v1"
	var t []Route
	add := func(id, method, path string, access Access, summary string, status []int, request, response string, query ...Param) {
		t = append(t, Route{ID: "graphs." + id, Method: method, Path: base + path, Slash: true, Group: GroupGraphs, Access: access,
			Summary: summary, Status: status, Request: request, Response: response, Query: query})
	}
	for _, owner := range []string{"releases", "plugins", "clusters"} {
		if owner != "clusters" {
			add(owner+".list", "GET", "/"+owner, Read, "List "+owner+".", ok, "", "RegistryEntries")
			add(owner+".create", "POST", "/"+owner, Write, "Register one of the "+owner+".", created, "NewRegistryEntry", "RegistryEntry")
			add(owner+".get", "GET", "/"+owner+"/{id}", Read, "Show one of the "+owner+".", ok, "", "RegistryEntry")
			add(owner+".update", "PUT", "/"+owner+"/{id}", Write, "Replace the name, version and role metadata of one of the "+owner+".", ok, "NewRegistryEntry", "RegistryEntry")
			add(owner+".delete", "DELETE", "/"+owner+"/{id}", Write, "Delete one of the "+owner+" and its graphs.", noContent, "", "")
		}
		if owner == "releases" {
			add("releases.deploymentTasks", "GET", "/releases/{id}/deployment_tasks", Read, "A release's tasks.", ok, "", "Tasks", graphType)
		}
		owned := "/" + owner + "/{id}/deployment_graphs"
		add(owner+".graphs.list", "GET", owned, Read, "List the graphs of one of the "+owner+".", ok, "", "Graphs")
		add(owner+".graphs.get", "GET", owned+"/{type}", Read, "Show a graph of one of the "+owner+" by type.", ok, "", "Graph")
		add(owner+".graphs.create", "POST", owned+"/{type}", Write, "Create a graph of one of the "+owner+".", created, "GraphInput", "Graph", validateGraph)
		add(owner+".graphs.update", "PUT", owned+"/{type}", Write, "Replace a graph of one of the "+owner+".", ok, "GraphInput", "Graph", validateGraph)
		add(owner+".graphs.patch", "PATCH", owned+"/{type}", Write, "Change a graph of one of the "+owner+".", ok, "GraphInput", "Graph", validateGraph)
		add(owner+".graphs.delete", "DELETE", owned+"/{type}", Write, "Delete a graph of one of the "+owner+".", noContent, "", "")
	}
	cluster := "/clusters/{id}"
	add("clusters.get", "GET", cluster, Read, "Show a cluster (an environment).", ok, "", "Cluster")
	add("clusters.put", "PUT", cluster, Write, "Set a cluster's release and plugins.", ok, "ClusterUpdate", "Cluster")
	add("clusters.tasks.merged", "GET", cluster+"/deployment_tasks", Read, "A cluster's merged tasks: release, plugins and its own.", ok, "", "Tasks", graphType)
	add("clusters.tasks.own", "GET", cluster+"/deployment_tasks/own", Read, "A cluster's own tasks.", ok, "", "Tasks", graphType)
	add("clusters.tasks.plugins", "GET", cluster+"/deployment_tasks/plugins", Read, "The tasks of a cluster's plugins.", ok, "", "Tasks", graphType)
	add("clusters.tasks.release", "GET", cluster+"/deployment_tasks/release", Read, "The tasks of a cluster's release.", ok, "", "Tasks", graphType)
	add("clusters.serializedTasks", "GET", cluster+"/serialized_tasks", Read, "A cluster's tasks as the deployment would run them, per node, with the tasks each node skips and why.", ok, "", "ClusterTasks",
		graphType, Param{Name: "nodes", Type: String, Description: "Comma-separated node ids."}, Param{Name: "force", Type: Flag, Description: "Plan as a forced run: every node's old data unknown."},
		Param{Name: "explain", Type: Flag, Description: "Say for each task on each node what placed it there and why it runs or is skipped: its condition's value and the data-diff calls that gave it."},
		nodeLimit, Param{Name: "marker", Type: String, Description: "Where the previous page ended (its next link has it)."})
	add("clusters.deploy", "PUT", cluster+"/deploy", Write, "Start a deployment of a cluster: a transaction.", accepted, "", "Transaction",
		graphType, Param{Name: "nodes", Type: String, Description: "Comma-separated node ids."}, Param{Name: "dry_run", Type: Flag, Description: "Plan without running."},
		Param{Name: "noop_run", Type: Flag, Description: "Run tasks in no-op mode."}, Param{Name: "force", Type: Flag, Description: "Run tasks whose inputs have not changed."}, Param{Name: "debug", Type: Flag, Description: "Verbose agents."},
		Param{Name: "claim_timeout", Type: Seconds, Description: "Seconds a node has to claim in its graph before it fails the run (default 600)."})
	add("clusters.claim", "POST", cluster+"/nodes/{node}/claim", Write, "The agent of a node claims its next task of the cluster's running transaction.", []int{http.StatusOK, http.StatusNoContent}, "", "Claim",
		Param{Name: "wait", Type: Seconds, Description: "Hold the claim up to this many seconds until a task is ready."})
	t[len(t)-1].Node = NodeOwnTask
	t = append(t, Route{ID: "graphs.clusters.graphviz", Method: "GET", Path: base + cluster + "/deploy_tasks/graph.gv", Group: GroupGraphs, Access: Read,
		Summary: "A cluster's task graph in Graphviz DOT.", Response: "Text", ContentType: "text/vnd.graphviz",
		Query: []Param{graphType, {Name: "tasks", Type: String, Description: "Comma-separated tasks to keep."}, {Name: "parents_for", Type: String, Description: "Only this task's ancestors."}, {Name: "remove", Type: String, Description: "Comma-separated task types to leave out."}}})

	add("graphs.list", "GET", "/graphs", Read, "List graphs.", ok, "", "Graphs",
		Param{Name: "releases_ids", Type: String, Description: "Comma-separated release ids."}, Param{Name: "plugins_ids", Type: String, Description: "Comma-separated plugin ids."},
		Param{Name: "clusters_ids", Type: String, Description: "Comma-separated cluster ids."}, Param{Name: "graph_types", Type: String, Description: "Comma-separated graph types."},
		Param{Name: "fetch_related", Type: Flag, Description: "Also the graphs of the clusters' release and plugins."})
	add("graphs.get", "GET", "/graphs/{id}", Read, "Show a graph.", ok, "", "Graph")
	add("graphs.update", "PUT", "/graphs/{id}", Write, "Replace a graph.", ok, "GraphInput", "Graph", validateGraph)
	add("graphs.patch", "PATCH", "/graphs/{id}", Write, "Change a graph.", ok, "GraphInput", "Graph", validateGraph)
	add("graphs.delete", "DELETE", "/graphs/{id}", Write, "Delete a graph.", noContent, "", "")
	add("graphs.execute", "POST", "/graphs/execute", Write, "Execute graphs on a cluster: a transaction.", accepted, "ExecuteRequest", "Transaction")

	tx := "/transactions/{uuid}"
	add("transactions.list", "GET", "/transactions", Read, "List transactions, newest first.", ok, "", "Transactions",
		Param{Name: "cluster_id", Type: String, Description: "Only this cluster's."}, Param{Name: "status", Type: String, Description: "Only transactions in this status."}, limit)
	add("transactions.get", "GET", tx, Read, "Show a transaction.", ok, "", "Transaction")
	add("transactions.plan", "GET", tx+"/plan", Read, "A transaction's plan: its tasks per node.", ok, "", "Plan",
		Param{Name: "nodes", Type: String, Description: "Comma-separated node ids: only their task lists."},
		nodeLimit, Param{Name: "marker", Type: String, Description: "The last node of the previous page."})
	add("transactions.stop", "POST", tx+"/stop", Write, "Stop a transaction.", ok, "", "Transaction")
	add("transactions.retry", "POST", tx+"/retry", Write, "Run an ended transaction again, whole or only what failed or did not finish: a new transaction.", accepted, "RetryRequest", "Transaction")
	add("transactions.claim", "POST", tx+"/nodes/{node}/claim", Write, "The agent of a node claims its next task.", ok, "", "Claim")
	t[len(t)-1].Node = NodeOwnTask
	add("transactions.result", "POST", tx+"/nodes/{node}/result", Write, "The agent of a node reports a task's result.", ok, "TaskReport", "NodeProgress")
	t[len(t)-1].Node = NodeOwnTask
	return t
}

func templateRoutes() []Route {
	const (
		nodes     = "/api/v1/nodes"
		templates = "/api/v1/deploy_templates"
		defaults  = "/api/v1/deploy_steps/defaults/{env}"
	)
	t := []Route{
		{ID: "nodes.create", Method: "POST", Path: nodes, Access: Write, Summary: "Register a node.", Request: "NewNode", Response: "NodeBody", Status: created},
		{ID: "nodes.list", Method: "GET", Path: nodes, Access: Read, Node: NodeHostnameSearch, Summary: "List nodes, or find one by host name.", Response: "NodeList",
			Query: []Param{{Name: "hostname", Type: String, Description: "Only the node with this FQDN."}, limit, marker}},
		{ID: "nodes.get", Method: "GET", Path: nodes + "/{id}", Access: Read, Node: NodeOwnEntry, Summary: "Show a node (by id, UUID or FQDN).", Response: "NodeBody"},
		{ID: "nodes.update", Method: "PUT", Path: nodes + "/{id}", Access: Write, Summary: "Change a node's placement, roles or host name.", Request: "NodeUpdate", Response: "NodeBody"},
		{ID: "nodes.delete", Method: "DELETE", Path: nodes + "/{id}", Access: Write, Summary: "Delete a node.", Status: noContent},
		{ID: "templates.create", Method: "POST", Path: templates, Access: Write, Since: httpapi.V1_1, Summary: "Create a deploy template.", Request: "NewTemplate", Response: "Template", Status: created},
		{ID: "templates.list", Method: "GET", Path: templates, Access: Read, Since: httpapi.V1_1, Summary: "List deploy templates.", Response: "TemplateList",
			Query: []Param{limit, marker, {Name: "sort_key", Type: String, Description: "Sort by this attribute."}, {Name: "sort_dir", Type: String, Description: "asc or desc."},
				{Name: "fields", Type: String, Description: "Comma-separated attributes to show."}, {Name: "detail", Type: Flag, Description: "Every attribute."}}},
		{ID: "templates.get", Method: "GET", Path: templates + "/{ident}", Access: Read, Since: httpapi.V1_1, Summary: "Show a deploy template (by UUID or name).", Response: "TemplateSubset",
			Query: []Param{{Name: "fields", Type: String, Description: "Comma-separated attributes to show."}}},
		{ID: "templates.patch", Method: "PATCH", Path: templates + "/{ident}", Access: Write, Since: httpapi.V1_1, Summary: "Change a deploy template (JSON Patch).", Request: "PatchOps", RequestTypes: []string{"application/json-patch+json"}, Response: "Template"},
		{ID: "templates.delete", Method: "DELETE", Path: templates + "/{ident}", Access: Write, Since: httpapi.V1_1, Summary: "Delete a deploy template.", Status: noContent},
		{ID: "steps.defaults.get", Method: "GET", Path: defaults, Access: Read, Since: httpapi.V1_1, Summary: "An environment's default deploy steps.", Response: "StepDefaults"},
		{ID: "steps.defaults.put", Method: "PUT", Path: defaults, Access: Write, Since: httpapi.V1_1, Summary: "Set an environment's default deploy steps.", Request: "NewStepDefaults", Response: "StepDefaults"},
		{ID: "steps.defaults.delete", Method: "DELETE", Path: defaults, Access: Write, Since: httpapi.V1_1, Summary: "Delete an environment's default deploy steps.", Status: noContent},
		{ID: "steps.node", Method: "POST", Path: nodes + "/{id}/deploy_steps", Access: Read, Since: httpapi.V1_1, Summary: "A node's deploy steps: its templates' steps over the defaults; changes nothing.", Request: "StepsRequest", Response: "DeploySteps"},
		{ID: "nodes.validate", Method: "GET", Path: nodes + "/{id}/validate", Access: Read, Since: httpapi.V1_1,
			Summary: "Validate a node (Ironic's shape: {interface: {result, reason}}): an interface fails when a deploy template enabled on the node has a step of it the node does not support.", Response: "NodeValidation"},
	}
	for i := range t {
		t[i].Group = GroupTemplates
	}
	return t
}

func authRoutes() []Route {
	t := []Route{
		{ID: "users.create", Method: "POST", Path: "/api/v1/users", Access: Admin, Summary: "Create a user.", Request: "NewUser", Response: "UserBody", Status: created},
		{ID: "users.list", Method: "GET", Path: "/api/v1/users", Access: Admin, Summary: "List users.", Response: "UserList"},
		{ID: "users.get", Method: "GET", Path: "/api/v1/users/{name}", Access: Admin, Summary: "Show a user.", Response: "UserBody"},
		{ID: "users.delete", Method: "DELETE", Path: "/api/v1/users/{name}", Access: Admin, Summary: "Delete a user and revoke its tokens.", Status: noContent},
		{ID: "tokens.create", Method: "POST", Path: "/api/v1/tokens", Access: Admin, Summary: "Issue an API token; the answer is the only one that shows its secret.", Request: "NewToken", Response: "CreatedToken", Status: created},
		{ID: "tokens.list", Method: "GET", Path: "/api/v1/tokens", Access: Admin, Summary: "List API tokens.", Response: "TokenList",
			Query: []Param{{Name: "user", Type: String, Description: "Only this user's tokens."}}},
		{ID: "tokens.revoke", Method: "DELETE", Path: "/api/v1/tokens/{id}", Access: Admin, Summary: "Revoke an API token.", Status: noContent},
		// The console's login and logout: every user has them for itself (a
		// session reads what its user may, under the same policy).
		{ID: "sessions.create", Method: "POST", Path: "/api/v1/sessions", Access: Read, Node: NodeOwnSession, Status: created, Response: "Session",
			Summary: "Open a console session: a token of the caller's own that expires (the console keeps it instead of the password or API token it logged in with); a session opens no other."},
		{ID: "sessions.delete", Method: "DELETE", Path: "/api/v1/sessions", Access: Read, Node: NodeOwnSession, Status: noContent,
			Summary: "End the console session whose token the request carries."},
		{ID: "audit.list", Method: "GET", Path: "/api/v1/audit", Access: Read, Summary: "The audit log, newest first.", Response: "AuditPage",
			Query: []Param{{Name: "environment", Type: String, Description: "Only this environment's records."}, limit, {Name: "before", Type: String, Description: "The cursor of the next page (the previous answer's \"next\")."}}},
	}
	for i := range t {
		t[i].Group = GroupAuth
	}
	return t
}
