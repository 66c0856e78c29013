package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentResults returns the results of node 7 in the transaction's first sub-transaction.
func agentResults(t *testing.T, url, tx string) (status, message string, results map[string]map[string]any) {
	t.Helper()
	c, err := newAPIClient()
	must(t, err)
	top, err := c.Transaction(context.Background(), tx)
	must(t, err)
	sub, err := c.Transaction(context.Background(), top.SubTransactions[0].UUID)
	must(t, err)
	results = map[string]map[string]any{}
	for _, r := range sub.Nodes[0].Results {
		results[r.Task] = toObject(r).(map[string]any)
	}
	return top.Status, top.Message, results
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The agent in-process with --once: file tasks, retries, the task environment
// without the agent's credentials, reboot not performed, a timeout.
func TestAgentOnce(t *testing.T) {
	url := cliServer(t)
	mustCLI(t, url, "", "comp", "create", "--name", "fuel", "--definition", "astute")
	mustCLI(t, url, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	registerNode(t, url, 7, "n7.example.com", 1)
	dir := t.TempDir()
	uploaded, copied, marker := filepath.Join(dir, "up", "file.txt"), filepath.Join(dir, "copy", "file.txt"), filepath.Join(dir, "marker")
	tasks := []map[string]any{
		{"id": "env", "type": "shell", "parameters": map[string]any{"env": map[string]string{"EXTRA": "x"},
			"cmd": `test -z "$TUNINGBOX_PASSWORD" && echo "id=$TUNINGBOX_NODE_ID task=$TUNINGBOX_TASK_ID fqdn=$TUNINGBOX_NODE_FQDN extra=$EXTRA"`}},
		{"id": "upload", "type": "upload_file", "requires": []string{"env"}, "parameters": map[string]any{"path": uploaded, "data": "hello\n", "permissions": "0600"}},
		{"id": "copy", "type": "copy_files", "requires": []string{"upload"}, "parameters": map[string]any{"files": []map[string]string{{"src": uploaded, "dst": copied}}}},
		{"id": "retry", "type": "shell", "requires": []string{"copy"}, "parameters": map[string]any{"retries": 1, "interval": 0.1,
			"cmd": fmt.Sprintf("test -f %s || { touch %s; exit 1; }", marker, marker)}},
		{"id": "reboot", "type": "reboot", "requires": []string{"retry"}},
	}
	raw, _ := json.Marshal(tasks)
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "default", "-f", writeFile(t, "tasks.json", string(raw)))
	tx := jsonOut(t, mustCLI(t, url, "", "graph", "execute", "-e", "1", "--format", "json")).(map[string]any)["uuid"].(string)

	mustCLI(t, url, "", "agent", "--node", "n7.example.com", "--once", "--workdir", filepath.Join(dir, "work"))
	status, message, results := agentResults(t, url, tx)
	if status != "ready" {
		t.Fatalf("transaction %s: %s", status, message)
	}
	if out := results["env"]["output"]; out != "id=7 task=env fqdn=n7.example.com extra=x\n" {
		t.Errorf("env task output %q", out)
	}
	if st, err := os.Stat(uploaded); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("uploaded file: %v %v", st, err)
	}
	if data, err := os.ReadFile(copied); err != nil || string(data) != "hello\n" {
		t.Errorf("copied file: %v %q", err, data)
	}
	if r := results["retry"]; r["status"] != "ready" || !strings.Contains(r["message"].(string), "attempt 2 of 2") {
		t.Errorf("retry result %v", r)
	}
	if r := results["reboot"]; r["status"] != "skipped" || !strings.Contains(r["message"].(string), "reboot not performed") {
		t.Errorf("reboot result %v", r)
	}
	logged, err := os.ReadFile(filepath.Join(dir, "work", "logs", tx, "env.log"))
	if err != nil || !strings.Contains(string(logged), "id=7") {
		t.Errorf("task log: %v %q", err, logged)
	}

	// No transaction runs: --once exits at once.
	mustCLI(t, url, "", "agent", "--node", "7", "--once", "--workdir", filepath.Join(dir, "work"))

	slow, _ := json.Marshal([]map[string]any{{"id": "slow", "type": "shell", "parameters": map[string]any{"cmd": "sleep 5", "timeout": 0.2}}})
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "slow", "-f", writeFile(t, "slow.json", string(slow)))
	tx = jsonOut(t, mustCLI(t, url, "", "graph", "execute", "-e", "1", "-t", "slow", "--format", "json")).(map[string]any)["uuid"].(string)
	start := time.Now()
	out, err := cli(t, url, "", "agent", "--node", "7", "--once", "--workdir", filepath.Join(dir, "work"))
	if err == nil || exitCode(err) != 1 || time.Since(start) > 4*time.Second {
		t.Fatalf("agent --once with a failing task: %v after %v\n%s", err, time.Since(start), out)
	}
	status, message, _ = agentResults(t, url, tx)
	if status != "error" || !strings.Contains(message, "Task slow failed on node 7 (n7.example.com): timed out after 200ms") {
		t.Errorf("transaction %s: %s", status, message)
	}
}

// At the newest microversion the API names nodes and environments by UUID,
// while executions name nodes by their registry id: the agent claims and
// reports for its node whatever --api-version says.
func TestAgentAtLatestMicroversion(t *testing.T) {
	url := cliServer(t)
	mustCLI(t, url, "", "comp", "create", "--name", "fuel", "--definition", "astute")
	mustCLI(t, url, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	registerNode(t, url, 7, "n7.example.com", 1)
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "default", "-f", writeFile(t, "tasks.yaml", "- {id: hello, type: shell, parameters: {cmd: 'true'}}\n"))
	tx := jsonOut(t, mustCLI(t, url, "", "--api-version", "latest", "graph", "execute", "-e", "1", "--format", "json")).(map[string]any)["uuid"].(string)
	mustCLI(t, url, "", "--api-version", "latest", "agent", "--node", "n7.example.com", "--once", "--workdir", t.TempDir())
	if status, message, results := agentResults(t, url, tx); status != "ready" || results["hello"]["status"] != "ready" {
		t.Fatalf("transaction %s: %s %v", status, message, results)
	}
}
