package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// graphColumns are what `graph list` prints in table form.
var graphColumns = []string{"id", "name", "type", "model", "model_id", "tasks"}

func newGraphCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Manage and execute deployment graphs (releases, plugins, environments)",
		Long: `Manage and execute deployment graphs, like fuel2's graph commands.
A graph belongs to one environment (-e), release (-r) or plugin (-p) under a
type (-t, default "default"). An environment's tasks are its release's graph,
overridden by its enabled plugins' graphs, overridden by its own.`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newGraphListCmd(), newGraphUploadCmd(), newGraphDownloadCmd(), newGraphDeleteCmd(), newGraphPlanCmd(), newGraphExecuteCmd(), newGraphRunCmd())
	return cmd
}

// graphOwner is the -e / -r / -p choice of upload and delete.
type graphOwner struct{ env, release, plugin string }

func (o *graphOwner) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.env, "env", "e", "", "environment (cluster) id or UUID")
	f.StringVarP(&o.release, "release", "r", "", "release id, UUID, name-version or name")
	f.StringVarP(&o.plugin, "plugin", "p", "", "plugin id, UUID, name-version or name")
}

// ownerKinds are the entity kinds of the graph owners, for resolving their names.
var ownerKinds = map[string]client.Kind{client.Clusters: client.KindEnvironment, client.Releases: client.KindRelease, client.Plugins: client.KindPlugin}

// resolve returns the kind of owner and its id as c's microversion takes it.
func (o graphOwner) resolve(ctx context.Context, c *client.Client) (kind, id string, err error) {
	if kind, id, err = o.owner(); err != nil {
		return "", "", err
	}
	id, err = c.Ref(ctx, ownerKinds[kind], id)
	return kind, id, err
}

// owner returns the kind of owner (client.Clusters, Releases or Plugins) and its id.
func (o graphOwner) owner() (kind, id string, err error) {
	n := 0
	for _, c := range []struct{ kind, id string }{{client.Clusters, o.env}, {client.Releases, o.release}, {client.Plugins, o.plugin}} {
		if c.id != "" {
			kind, id, n = c.kind, c.id, n+1
		}
	}
	if n != 1 {
		return "", "", usagef("give exactly one of --env, --release or --plugin")
	}
	return kind, id, nil
}

func newGraphListCmd() *cobra.Command {
	var env, format string
	cmd := &cobra.Command{
		Use:   "list [-e ENV]",
		Short: "List graphs: all, or an environment's together with its release's and enabled plugins'",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			var f client.GraphFilter
			if env != "" {
				ref, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
				if err != nil {
					return err
				}
				f = client.GraphFilter{Clusters: []string{ref}, FetchRelated: true}
			}
			found, err := c.Graphs(cmd.Context(), f)
			if err != nil {
				return err
			}
			graphs := toObjects(found)
			if format == formatTable {
				graphs = graphRows(graphs)
			}
			return renderObjects(cmd.OutOrStdout(), format, graphs, graphColumns)
		},
	}
	cmd.Flags().StringVarP(&env, "env", "e", "", "environment (cluster) id")
	addListFormat(cmd, &format)
	return cmd
}

// graphRows flattens graphs for the table: the relation's fields and the task ids.
func graphRows(graphs []any) []any {
	rows := make([]any, len(graphs))
	for i, g := range graphs {
		m, _ := g.(map[string]any)
		row := map[string]any{"id": m["id"], "name": m["name"]}
		if rels, _ := m["relations"].([]any); len(rels) > 0 {
			rel, _ := rels[0].(map[string]any)
			row["type"], row["model"], row["model_id"] = rel["type"], rel["model"], rel["model_id"]
		}
		tasks, _ := m["tasks"].([]any)
		ids := make([]any, len(tasks))
		for j, t := range tasks {
			task, _ := t.(map[string]any)
			ids[j] = task["id"]
		}
		row["tasks"] = ids
		rows[i] = row
	}
	return rows
}

func newGraphUploadCmd() *cobra.Command {
	var (
		owner     graphOwner
		graphType string
		file, dir string
		validate  bool
		yes       bool
	)
	cmd := &cobra.Command{
		Use:   "upload (-e ENV | -r RELEASE | -p PLUGIN) [-t TYPE] (-f FILE | -d DIR) [--validate] [--yes]",
		Short: "Create or replace a graph from a YAML/JSON file or a directory",
		Long: `Create or replace a graph. -f names a YAML or JSON file holding either a
list of tasks or a graph {name, tasks, node_filter, on_success, on_error,
on_stop}, "-" standard input; -d names a directory with tasks.yaml and an optional metadata.yaml.
An existing graph of the type is replaced (tasks and the given metadata),
otherwise one is created. --validate makes the server check the merged graph
of every environment the graph takes part in before storing it.

Without -t the graph is the "default" one, which every deployment runs: the
command asks to confirm that on a terminal; --yes confirms beforehand, and
without a terminal and without --yes nothing is written.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("type") && !yes {
				if err := confirmDefaultType(cmd, file); err != nil {
					return err
				}
			}
			if _, _, err := owner.owner(); err != nil {
				return err
			}
			var (
				body map[string]any
				err  error
			)
			switch {
			case (file == "") == (dir == ""):
				return usagef("give exactly one of --file or --dir")
			case file != "":
				body, err = readGraphFile(cmd.InOrStdin(), file)
			default:
				body, err = readGraphDir(dir)
			}
			if err != nil {
				return err
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			kind, id, err := owner.resolve(cmd.Context(), c)
			if err != nil {
				return err
			}
			raw, err := json.Marshal(body)
			if err != nil {
				return err
			}
			// Replace the graph of the type, or create it when the owner has none
			// (when the owner does not exist either, creating says so).
			verb := "updated"
			g, err := c.OwnedGraph(cmd.Context(), kind, id, graphType)
			switch {
			case err == nil:
				g, err = c.UpdateGraph(cmd.Context(), kind, id, graphType, raw, validate)
			case errors.Is(err, client.ErrNotFound):
				verb = "created"
				g, err = c.CreateGraph(cmd.Context(), kind, id, graphType, raw, validate)
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Deployment graph %s (id %s, type %s)\n", verb, g.ID, graphType)
			return err
		},
	}
	owner.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&graphType, "type", "t", "default", "graph type")
	f.StringVarP(&file, "file", "f", "", "YAML or JSON file with the tasks or the graph (- for standard input)")
	f.StringVarP(&dir, "dir", "d", "", "directory with tasks.yaml and an optional metadata.yaml")
	f.BoolVar(&validate, "validate", false, "reject the graph unless the merged graphs it takes part in are valid")
	f.BoolVarP(&yes, "yes", "y", false, "without --type, upload as the default graph without asking")
	return cmd
}

// stdinIsTerminal reports whether r is an interactive terminal (a variable for the tests).
var stdinIsTerminal = func(r io.Reader) bool { return isTerminal(r) }

// stdoutIsTerminal reports whether w is a terminal (a variable for the tests).
var stdoutIsTerminal = func(w io.Writer) bool { return isTerminal(w) }

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// confirmDefaultType asks, on a terminal, whether an upload without --type
// is meant for the default graph (spec 002: "'default' graph type with
// confirmation"). Anything but yes writes nothing.
func confirmDefaultType(cmd *cobra.Command, file string) error {
	in := cmd.InOrStdin()
	if file == "-" || !stdinIsTerminal(in) {
		return usagef("no --type given: pass --type default (or --yes) to upload the default graph")
	}
	fmt.Fprint(cmd.ErrOrStderr(), `No --type given: upload as the "default" graph, which every deployment runs? [y/N] `)
	var answer string
	if _, err := fmt.Fscanln(in, &answer); err != nil && err.Error() != "unexpected newline" {
		return usagef("upload cancelled")
	}
	if a := strings.ToLower(answer); a != "y" && a != "yes" {
		return usagef("upload cancelled")
	}
	return nil
}

// readValue reads a JSON or YAML file ("-" is standard input) as a decoded JSON value.
func readValue(stdin io.Reader, name string) (any, error) {
	raw, err := readDocument(stdin, name)
	if err != nil {
		return nil, err
	}
	return decodeJSON(raw)
}

// readGraphFile reads a graph body from a file holding a task list or a graph object.
func readGraphFile(stdin io.Reader, path string) (map[string]any, error) {
	v, err := readValue(stdin, path)
	if err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case []any:
		return map[string]any{"tasks": t}, nil
	case map[string]any:
		return t, nil
	}
	return nil, usagef("%s: want a list of tasks or a graph object", path)
}

// readGraphDir reads a graph from dir: metadata.yaml (optional, a graph
// object without tasks) and tasks.yaml or, without one, every tasks.yaml below
// dir concatenated in path order (fuel-library's layout: one per module).
func readGraphDir(dir string) (map[string]any, error) {
	body := map[string]any{}
	meta, err := readValue(nil, filepath.Join(dir, "metadata.yaml"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		m, ok := meta.(map[string]any)
		if !ok && meta != nil {
			return nil, usagef("%s: want a mapping", filepath.Join(dir, "metadata.yaml"))
		}
		maps.Copy(body, m)
	}
	files, err := taskFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && len(body) == 0 {
		return nil, usagef("%s has neither tasks.yaml nor metadata.yaml", dir)
	}
	var all []any
	for _, file := range files {
		tasks, err := readValue(nil, file)
		if err != nil {
			return nil, err
		}
		list, ok := tasks.([]any)
		if !ok && tasks != nil {
			return nil, usagef("%s: want a list of tasks", file)
		}
		all = append(all, list...)
	}
	if len(files) > 0 {
		body["tasks"] = all
	}
	return body, nil
}

// taskFiles returns dir/tasks.yaml, or every tasks.yaml below dir in path order.
func taskFiles(dir string) ([]string, error) {
	top := filepath.Join(dir, "tasks.yaml")
	if _, err := os.Stat(top); err == nil {
		return []string{top}, nil
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "tasks.yaml" {
			files = append(files, path)
		}
		return err
	})
	return files, err
}

// downloadSources maps download's level flags to the deployment_tasks views.
var downloadSources = []struct{ flag, short, source, usage string }{
	{"all", "a", client.TasksMerged, "the merged tasks: release < plugins < environment"},
	{"cluster", "c", client.TasksOwn, "the environment's own graph"},
	{"plugins", "p", client.TasksPlugins, "the enabled plugins' graphs"},
	{"release", "r", client.TasksRelease, "the release's graph"},
}

func newGraphDownloadCmd() *cobra.Command {
	var (
		env, graphType, file, format string
		levels                       = make([]bool, len(downloadSources))
	)
	cmd := &cobra.Command{
		Use:   "download -e ENV (-a | -c | -p | -r) [-t TYPE] [-f FILE] [--format yaml|json]",
		Short: "Save an environment's tasks of a graph type to a file",
		Long: `Save an environment's tasks of a graph type: merged (--all) or from one
source. The file defaults to <level>_graph_<type>_<env>.<format> in the current
directory; "-f -" writes to standard output.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env == "" {
				return usagef("--env is required")
			}
			if format != formatYAML && format != formatJSON {
				return usagef("unknown --format %q (want yaml or json)", format)
			}
			chosen := -1
			for i, set := range levels {
				if set {
					if chosen >= 0 {
						return usagef("give exactly one of --all, --cluster, --plugins or --release")
					}
					chosen = i
				}
			}
			if chosen < 0 {
				return usagef("give exactly one of --all, --cluster, --plugins or --release")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			src := downloadSources[chosen]
			cluster, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
			if err != nil {
				return err
			}
			found, err := c.DeploymentTasks(cmd.Context(), cluster, graphType, src.source)
			if err != nil {
				return err
			}
			tasks := make([]any, len(found))
			for i, t := range found {
				if tasks[i], err = decodeJSON(t); err != nil {
					return err
				}
			}
			if file == "-" {
				return render(cmd.OutOrStdout(), tasks, format)
			}
			if file == "" {
				file = fmt.Sprintf("%s_graph_%s_%s.%s", src.flag, graphType, env, format)
			}
			out, err := os.Create(file)
			if err != nil {
				return err
			}
			if err := render(out, tasks, format); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Tasks were downloaded to %s\n", file)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&env, "env", "e", "", "environment (cluster) id")
	for i, src := range downloadSources {
		f.BoolVarP(&levels[i], src.flag, src.short, false, src.usage)
	}
	f.StringVarP(&graphType, "type", "t", "default", "graph type")
	f.StringVarP(&file, "file", "f", "", "file to write (- for standard output)")
	f.StringVar(&format, "format", formatYAML, "file format: yaml or json")
	return cmd
}

func newGraphDeleteCmd() *cobra.Command {
	var (
		owner     graphOwner
		graphType string
	)
	cmd := &cobra.Command{
		Use:   "delete (-e ENV | -r RELEASE | -p PLUGIN) -t TYPE",
		Short: "Delete a graph",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if graphType == "" {
				return usagef("--type is required")
			}
			if _, _, err := owner.owner(); err != nil {
				return err
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			kind, id, err := owner.resolve(cmd.Context(), c)
			if err != nil {
				return err
			}
			if err := c.DeleteGraph(cmd.Context(), kind, id, graphType); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Deployment graph %s was deleted\n", graphType)
			return err
		},
	}
	owner.register(cmd)
	cmd.Flags().StringVarP(&graphType, "type", "t", "", "graph type")
	return cmd
}

func newGraphExecuteCmd() *cobra.Command {
	var (
		env, format                         string
		types, nodes, tasks, skip           []string
		force, dryRun, noop, debug, explain bool
		claimTimeout                        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "execute -e ENV [-t TYPE[,TYPE...]] [-n NODE,...] [-T TASK,...] [--skip-tasks TASK,...] [--force] [--dry-run | --noop] [--debug]",
		Short: "Execute graphs on an environment, one after another",
		Long: `Execute graphs on an environment. Each type (default: "default") becomes a
sub-transaction, run in the order given; --node limits every graph to some
nodes (--nodes is the same; ids, UUIDs or FQDNs), -T to some tasks (the others
are sent as skipped) and --skip-tasks sends those tasks as skipped. Prints the new transaction (a run); the agents on the nodes
(tuningbox agent) then run it (see docs/graphs.md): follow it with graph run
wait. A node whose agent has not claimed within --claim-timeout of its graph's
start fails the run as unreachable.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env == "" {
				return usagef("--env is required")
			}
			if dryRun && noop {
				return usagef("--dry-run and --noop do not go together")
			}
			if claimTimeout <= 0 {
				return usagef("--claim-timeout must be positive")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			// The client sends the cluster in the form the microversion takes (the UUID from 1.2 on).
			cluster := client.ID(env)
			in := client.ExecuteRequest{Cluster: &cluster, Graphs: make([]client.GraphRun, len(types)), DryRun: dryRun, NoopRun: noop, Force: force, Debug: debug, Explain: explain}
			seconds := claimTimeout.Seconds()
			in.ClaimTimeout = &seconds
			for i, t := range types {
				in.Graphs[i] = client.GraphRun{Type: t, Tasks: tasks, SkipTasks: skip}
				for _, n := range nodes {
					in.Graphs[i].Nodes = append(in.Graphs[i].Nodes, client.NodeID(n))
				}
			}
			tx, err := c.Execute(cmd.Context(), in)
			if err != nil {
				return err
			}
			if !dryRun {
				return renderObject(cmd.OutOrStdout(), format, transactionRow(toObject(tx), format), transactionFields)
			}
			plans := make([]*client.Plan, len(tx.SubTransactions))
			for i, sub := range tx.SubTransactions {
				if plans[i], err = c.TransactionPlan(cmd.Context(), sub.UUID); err != nil {
					return err
				}
			}
			if format != formatTable {
				// One document: the run with its plans.
				run := toObject(tx).(map[string]any)
				run["plans"] = toObjects(plans)
				return renderObject(cmd.OutOrStdout(), format, run, transactionFields)
			}
			if err := renderObject(cmd.OutOrStdout(), format, transactionRow(toObject(tx), format), transactionFields); err != nil {
				return err
			}
			printPlans(cmd.OutOrStdout(), plans, nil)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&env, "env", "e", "", "environment (cluster): id or UUID")
	f.StringSliceVarP(&types, "type", "t", []string{"default"}, "graph types to run, in order (repeat or comma-separate)")
	f.StringSliceVarP(&nodes, "node", "n", nil, "node ids to run on (default: all the environment's)")
	f.StringSliceVar(&nodes, "nodes", nil, "the same as --node")
	f.StringSliceVarP(&tasks, "tasks", "T", nil, "task ids to run; the others are skipped")
	f.StringSliceVar(&skip, "skip-tasks", nil, "task ids to skip")
	f.BoolVar(&force, "force", false, "ask agents to run tasks even when nothing changed")
	f.BoolVar(&dryRun, "dry-run", false, "plan the run and print each node's tasks to run and to skip; nothing runs and the environment is not held")
	f.BoolVar(&noop, "noop", false, "ask agents to run tasks in no-op mode")
	f.BoolVar(&debug, "debug", false, "ask agents for debug output")
	f.BoolVar(&explain, "explain", false, "keep with the run's plans why each task is on each node and runs or is skipped (with --dry-run, printed)")
	f.DurationVar(&claimTimeout, "claim-timeout", wire.DefaultClaimTimeout, "fail the run when a node has not claimed within this long of its graph's start")
	addListFormat(cmd, &format)
	return cmd
}

func newGraphPlanCmd() *cobra.Command {
	var (
		env, graphType, format  string
		nodes, only             []string
		force, explain, changes bool
	)
	cmd := &cobra.Command{
		Use:   "plan -e ENV [-t TYPE] [-n NODE]... [--force] [--explain [--task T]... | --changes]",
		Short: "Show what a run would do on each node, without running or storing anything",
		Long: `Show what executing a graph on an environment would do now: for each node,
the tasks it would run in order and the ones it would skip with the reason,
and the plan's warnings (such as master tasks with no master node). Nothing is
stored, nothing runs and the environment is not held. --force plans as a
forced run would (every condition sees a first deployment). --explain says
for each task what placed it on the node (the tag, role or group and where
it comes from) and why it runs or is skipped: its condition's value and each
changed(), changedAny(), old() ... call with the values it compared; --task
limits the listing to some tasks. --changes lists, per node, the data
whose change since the node's last successful run makes tasks run, with
the tasks each change makes run. --format json prints each task as the
node's agent would get it, with its explanation.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env == "" {
				return usagef("--env is required")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			refs := make([]client.NodeID, len(nodes))
			for i, n := range nodes {
				refs[i] = client.NodeID(n)
			}
			tasks, err := c.SerializedTasks(cmd.Context(), env, client.PlanQuery{Type: graphType, Nodes: refs, Force: force, Explain: explain || changes})
			if err != nil {
				return err
			}
			if changes {
				printChanges(cmd.OutOrStdout(), tasks)
				return nil
			}
			if format != formatTable {
				return renderObject(cmd.OutOrStdout(), format, toObject(tasks), nil)
			}
			plan := &client.Plan{GraphType: tasks.GraphType, Warnings: tasks.Warnings, Unplaced: tasks.Unplaced,
				NodeTasks: map[string][]wire.SerializedTask{}, Skipped: map[string][]wire.SkippedTask{}}
			for _, n := range tasks.Nodes {
				plan.Nodes = append(plan.Nodes, n.Node)
				plan.NodeTasks[n.Node], plan.Skipped[n.Node] = n.Tasks, n.Skipped
			}
			printPlans(cmd.OutOrStdout(), []*client.Plan{plan}, only)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&env, "env", "e", "", "environment (cluster): id or UUID")
	f.StringVarP(&graphType, "type", "t", "default", "graph type")
	f.BoolVar(&explain, "explain", false, "say why each task is on each node and runs or is skipped")
	f.StringSliceVar(&only, "task", nil, "list only these tasks (repeat or comma-separate)")
	f.BoolVar(&changes, "changes", false, "list the changed data that makes tasks run, per node, with the tasks it makes run")
	f.StringSliceVarP(&nodes, "node", "n", nil, "nodes to plan for, by id or FQDN (default: all the environment's)")
	f.BoolVar(&force, "force", false, "plan as a forced run: every node's old data unknown")
	addListFormat(cmd, &format)
	return cmd
}

// printPlans prints, for each graph of a run, what each node runs and what
// it skips, with the reason and, when the plan is explained, why; only,
// when given, limits the tasks listed.
func printPlans(out io.Writer, plans []*client.Plan, only []string) {
	listed := func(id string) bool { return len(only) == 0 || slices.Contains(only, id) }
	for _, plan := range plans {
		fmt.Fprintf(out, "\ngraph %s:\n", plan.GraphType)
		for _, w := range plan.Warnings {
			fmt.Fprintf(out, "  warning: %s\n", w)
		}
		if len(plan.Unplaced) > 0 {
			fmt.Fprintf(out, "  placed on no node: %s\n", strings.Join(plan.Unplaced, ", "))
		}
		for _, node := range plan.Nodes {
			tasks, skipped := plan.NodeTasks[node], plan.Skipped[node]
			fmt.Fprintf(out, "  node %s: %d to run, %d skipped\n", node, len(tasks), len(skipped))
			for _, t := range tasks {
				if listed(t.Task.ID()) {
					fmt.Fprintf(out, "    run  %s\n", t.Task.ID())
					printWhy(out, t.Why)
				}
			}
			for _, s := range skipped {
				if listed(s.Task) {
					fmt.Fprintf(out, "    skip %s (%s)\n", s.Task, s.Reason)
					printWhy(out, s.Why)
				}
			}
		}
	}
}

// printChanges prints, for each node, each changed piece of data that a task's
// condition found changed (a data-diff call answering true), with its old
// and new values and the tasks whose condition it made true.
func printChanges(out io.Writer, tasks *client.ClusterTasks) {
	for _, n := range tasks.Nodes {
		type change struct {
			old, new          *string
			written, deployed *client.KeyOrigin
			tasks             []string
		}
		var order []string
		changed := map[string]*change{}
		for _, t := range n.Tasks {
			if t.Why == nil || t.Why.Condition == nil {
				continue
			}
			for _, call := range t.Why.Condition.Calls {
				if call.Result != true || !strings.HasPrefix(call.Function, "changed") {
					continue
				}
				ch, ok := changed[call.Arg]
				if !ok {
					ch = &change{old: call.Old, new: call.New, written: call.Written, deployed: call.Deployed}
					changed[call.Arg] = ch
					order = append(order, call.Arg)
				}
				if !slices.Contains(ch.tasks, t.Task.ID()) {
					ch.tasks = append(ch.tasks, t.Task.ID())
				}
			}
		}
		fmt.Fprintf(out, "node %s: %d changes make tasks run\n", n.Node, len(order))
		for _, arg := range order {
			ch := changed[arg]
			fmt.Fprintf(out, "  %s: %s -> %s\n", arg, quoted(ch.old), quoted(ch.new))
			if origin := origins(ch.written, ch.deployed); origin != "" {
				fmt.Fprintf(out, "    %s\n", origin)
			}
			fmt.Fprintf(out, "    runs %s\n", strings.Join(ch.tasks, ", "))
		}
	}
}

// printWhy prints a task's explanation under its line.
func printWhy(out io.Writer, why *client.Why) {
	if why == nil {
		return
	}
	fmt.Fprintf(out, "         placed: %s\n         %s\n", why.Placed, why.Decision)
	if why.Data != "" {
		fmt.Fprintf(out, "         data: %s\n", why.Data)
	}
	if c := why.Condition; c != nil {
		for _, call := range c.Calls {
			fmt.Fprintf(out, "         %s: %s %s -> %s: %v\n", call.Call, call.Arg, quoted(call.Old), quoted(call.New), call.Result)
			if origin := origins(call.Written, call.Deployed); origin != "" {
				fmt.Fprintf(out, "           %s\n", origin)
			}
		}
	}
}

// origins says who wrote a changed key's value, and which version was deployed.
func origins(written, deployed *client.KeyOrigin) string {
	if written == nil {
		return ""
	}
	s := fmt.Sprintf("written at %s version %d, %s", written.Level, written.Version, written.CreatedAt.Format(time.RFC3339))
	if w := written.WrittenBy; w != nil {
		s += fmt.Sprintf(" by %s (%s, request %s)", w.Principal, cmp.Or(w.Role, "-"), cmp.Or(w.RequestID, "-"))
	}
	if deployed != nil {
		s += fmt.Sprintf("; deployed: %s version %d", deployed.Level, deployed.Version)
	}
	return s
}

// quoted is an explained value, or "(not read)".
func quoted(v *string) string {
	if v == nil {
		return "(not read)"
	}
	return *v
}

// transactionFields are what `graph execute` prints in table form.
var transactionFields = []string{"uuid", "status", "cluster_id", "dry_run", "sub_transactions"}

// transactionRow shows sub-transactions as "type:status" for the table.
func transactionRow(tx any, format string) any {
	m, ok := tx.(map[string]any)
	if !ok || format != formatTable {
		return tx
	}
	subs, _ := m["sub_transactions"].([]any)
	parts := make([]any, len(subs))
	for i, s := range subs {
		sub, _ := s.(map[string]any)
		parts[i] = fmt.Sprintf("%s:%s", cell(sub["graph_type"]), cell(sub["status"]))
	}
	row := maps.Clone(m)
	row["sub_transactions"] = parts
	return row
}
