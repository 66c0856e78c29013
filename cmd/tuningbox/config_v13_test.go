package main

import (
	"strings"
	"testing"
	"time"
)

// TestConfigMergeExplainAsOfDiff drives the 1.3 reads from the CLI against a
// real server: --merge, --explain, --as-of on get, and diff --to-node, --to-env, --as-of.
func TestConfigMergeExplainAsOfDiff(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	global := []string{"--env", "1", "--resource", "astute"}
	node1 := append([]string{"--level", "nodes=node-1.domain.tld"}, global...)
	mustCLI(t, url, `{"nova": {"workers": 4, "debug": false}, "ntp": ["a"]}`, append([]string{"config", "set"}, global...)...)
	before := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(5 * time.Millisecond)
	mustCLI(t, url, `{"nova": {"debug": true}, "ntp": ["b"]}`, append([]string{"config", "override"}, node1...)...)

	get := func(args ...string) string {
		return mustCLI(t, url, "", append(append([]string{"config", "get"}, node1...), args...)...)
	}
	assertJSON(t, get(), `{"nova": {"debug": true}, "ntp": ["b"]}`)
	assertJSON(t, get("--merge", "deep"), `{"nova": {"workers": 4, "debug": true}, "ntp": ["b", "a"]}`)
	assertJSON(t, get("--as-of", before), `{"nova": {"workers": 4, "debug": false}, "ntp": ["a"]}`)
	if ex := get("--merge", "deep", "--explain"); !strings.Contains(ex, `"nova.workers"`) || !strings.Contains(ex, `"principal": "`+testAdmin+`"`) {
		t.Errorf("explain:\n%s", ex)
	}

	diff := mustCLI(t, url, "", append([]string{"config", "diff", "--to-node", "node-2.domain.tld"}, node1...)...)
	want := "--- astute of environment 1 at nodes=node-1.domain.tld, effective\n" +
		"+++ astute of environment 1 at nodes=node-2.domain.tld, effective\n" +
		"~ nova.debug: true -> false\n+ nova.workers: 4\n~ ntp: [\"b\"] -> [\"a\"]\n2 changed, 1 added, 0 removed\n"
	if diff != want {
		t.Errorf("diff --to-node:\n%s\nwant:\n%s", diff, want)
	}
	if d := mustCLI(t, url, "", append([]string{"config", "diff", "--as-of", before}, node1...)...); !strings.Contains(d, "~ nova.debug: false -> true\n") || !strings.Contains(d, "as of "+before) {
		t.Errorf("diff --as-of:\n%s", d)
	}
	mustCLI(t, url, "", "env", "create", "--id", "2", "--components", "fuel", "--levels", "nodes")
	if d := mustCLI(t, url, "", append([]string{"config", "diff", "--to-env", "2"}, global...)...); !strings.Contains(d, "- nova.workers: 4\n") {
		t.Errorf("diff --to-env:\n%s", d)
	}
	if _, err := cli(t, url, "", append([]string{"config", "get", "--as-of", "yesterday"}, node1...)...); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("bad --as-of: %v", err)
	}
}
