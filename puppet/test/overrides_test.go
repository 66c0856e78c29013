package puppettest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
)

// The override data lives in two data sources, read through the tuningbox
// Hiera backend like Fuel's override/configuration/<fqdn> and /cluster.
const (
	nodeOverrides    = "override/configuration/node"
	clusterOverrides = "override/configuration/cluster"
)

// overridesHiera reads tuningbox's connection for the class from a local YAML
// file (a site secret on the Puppet server) and the override data from tuningbox.
const overridesHiera = `version: 5
hierarchy:
  - name: site
    data_hash: yaml_data
    path: "%[1]s"
  - name: %[4]s
    data_hash: tuningbox::data_hash
    uri: &tuningbox "%[2]s"
    options: &env { environment: "%[3]d", resource: %[4]s, user: %[6]s, password: %[7]s }
  - name: %[5]s
    data_hash: tuningbox::data_hash
    uri: *tuningbox
    options: { <<: *env, resource: %[5]s }
`

// overridesManifest declares file a (before b), file b inside a defined type,
// and the class; %[1]s is the scenario's directory. The class comes first: it
// acts once every other resource is in the catalog, wherever it is declared.
const overridesManifest = `class { 'tuningbox::override_resources': }
define wrapped_file(String $content) { file { $title: content => $content } }
file { '%[1]s/a': content => "original\n", before => File['%[1]s/b'] }
wrapped_file { '%[1]s/b': content => "b\n" }
`

// overrideScenario is one puppet apply: override data in tuningbox, and what
// the files of the scenario's directory must hold afterwards.
type overrideScenario struct {
	name string
	// data maps a data source to its YAML; DIR stands for the scenario's directory.
	data map[string]string
	// connection is the uri the class posts to; "" is the test's server.
	connection string
	// want maps a file name to its content; "" means the file must not exist.
	want map[string]string
	// wantMode maps a file name to its permission bits.
	wantMode map[string]os.FileMode
	// wantError, when set, is text the failed run's errors must contain.
	wantError []string
}

func TestOverrideResourcesInPuppetApply(t *testing.T) {
	if os.Getenv("TUNINGBOX_HIERA_TEST") != "1" {
		t.Skip("set TUNINGBOX_HIERA_TEST=1 (make hiera) to run real puppet apply")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Fatal("puppet is not on the PATH: run puppet/test/run.sh, which installs puppet-agent")
	}
	root := repoRoot(t)
	srv := startServer(t)
	srv.createUser(t, client.NewUser{Name: hieraUser, Password: hieraPassword, Role: "observer"})
	validated := json.RawMessage(`{"validator": "puppet-resource-overrides"}`)
	if _, err := srv.api(t).CreateComponent(t.Context(), client.NewComponent{Name: "puppet", ResourceDefinitions: []client.NewResourceDefinition{
		{Name: nodeOverrides, Content: validated}, {Name: clusterOverrides, Content: validated}}}); err != nil {
		t.Fatal(err)
	}

	scenarios := []overrideScenario{
		{
			name: "updated and created, data deep-merged over two Hiera levels",
			data: map[string]string{
				nodeOverrides: `
configuration:
  file:
    DIR/a: {content: "overridden\n", notify: "Exec[mark]"}
`,
				clusterOverrides: `
configuration:
  file:
    DIR/a: {content: "cluster loses to node\n", mode: "0600"}
    DIR/c: {content: "created\n"}
  exec:
    mark: {command: "/usr/bin/touch DIR/marker", refreshonly: true}
  wrapped_file:
    DIR/w: {content: "a defined type, created\n"}
`,
			},
			want: map[string]string{"a": "overridden\n", "b": "b\n", "c": "created\n", "marker": "present",
				"w": "a defined type, created\n"},
			wantMode: map[string]os.FileMode{"a": 0o600},
		},
		{
			name: "create false: the exception lists name what is created",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/a: {content: "updated\n"}
    DIR/d: {content: "title listed\n"}
    DIR/e: {content: "not listed\n"}
  exec:
    mark: {command: "/usr/bin/touch DIR/marker"}
configuration_options:
  create: false
  titles_create_exception: [DIR/d]
  types_create_exception: [exec]
`},
			want: map[string]string{"a": "updated\n", "b": "b\n", "d": "title listed\n", "e": "", "marker": "present"},
		},
		{
			name: "create unset (true): either exception list stops creation",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/d: {content: "created\n"}
    DIR/e: {content: "title listed\n"}
  exec:
    mark: {command: "/usr/bin/touch DIR/marker"}
configuration_options:
  titles_create_exception: [DIR/e]
  types_create_exception: [exec]
`},
			want: map[string]string{"a": "original\n", "d": "created\n", "e": "", "marker": ""},
		},
		{
			name: "types_filter: only file entries are processed",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/a: {content: "filtered in\n"}
  exec:
    mark: {command: "/usr/bin/touch DIR/marker"}
configuration_options:
  types_filter: [file]
`},
			want: map[string]string{"a": "filtered in\n", "b": "b\n", "marker": ""},
		},
		{
			name: "defaults: added to every updated or created file unless it sets its own",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/a: {}
    DIR/f: {}
    DIR/g: {content: "own\n"}
configuration_options:
  defaults:
    file: {content: "default\n", mode: "0640"}
`},
			want:     map[string]string{"a": "default\n", "b": "b\n", "f": "default\n", "g": "own\n"},
			wantMode: map[string]os.FileMode{"a": 0o640, "f": 0o640, "g": 0o640},
		},
		{
			name: "an unknown type fails the run, naming it, and changes no file",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/a: {content: "never\n"}
    DIR/h: {content: "never\n"}
  no_such_type_xyz:
    x: {p: 1}
`},
			want:      map[string]string{"a": "pre-existing\n", "b": "", "h": ""},
			wantError: []string{"No_such_type_xyz[x]", "unknown resource type no_such_type_xyz"},
		},
		{
			name: "a dependency cycle fails the run",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/b: {before: "File[DIR/a]", content: "never\n"}
`},
			want:      map[string]string{"a": "pre-existing\n", "b": ""},
			wantError: []string{"dependency cycle: File[DIR/b] -> File[DIR/a] -> File[DIR/b]"},
		},
		{
			name: "an evaluated defined type's instance cannot be updated",
			data: map[string]string{nodeOverrides: `
configuration:
  wrapped_file:
    DIR/b: {content: "never\n"}
`},
			want:      map[string]string{"a": "pre-existing\n", "b": ""},
			wantError: []string{"Wrapped_file[DIR/b] is an instance of the defined type Wrapped_file, already evaluated"},
		},
		{
			name: "tuningbox unreachable fails the run",
			data: map[string]string{nodeOverrides: `
configuration:
  file:
    DIR/a: {content: "never\n"}
`},
			connection: "http://127.0.0.1:1",
			want:       map[string]string{"a": "pre-existing\n", "b": ""},
			wantError:  []string{"POST http://127.0.0.1:1/api/v1/config/overrides/apply", "tuningbox is unreachable and nothing was applied"},
		},
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			runOverrideScenario(t, root, srv, int64(i+1), sc)
		})
	}
}

func runOverrideScenario(t *testing.T, root string, srv *server, env int64, sc overrideScenario) {
	dir := t.TempDir()
	expand := func(s string) string { return strings.ReplaceAll(s, "DIR", dir) }
	srv.cli(t, "", "env", "create", "--id", fmt.Sprint(env), "--components", "puppet", "--levels", "nodes")
	for resource, yaml := range sc.data {
		srv.cli(t, expand(yaml), "config", "set", "--env", fmt.Sprint(env), "--resource", resource, "--format", "yaml")
	}
	connection := sc.connection
	if connection == "" {
		connection = srv.url
	}
	site := filepath.Join(t.TempDir(), "site.yaml")
	writeTestFile(t, site, fmt.Sprintf("tuningbox::connection: {uri: %q, user: %s, password: %s}\n", connection, hieraUser, hieraPassword))
	p := newPuppet(t, root, fmt.Sprintf(overridesHiera, site, srv.url, env, nodeOverrides, clusterOverrides, hieraUser, hieraPassword))
	manifest := filepath.Join(p.dir, "site.pp")
	writeTestFile(t, manifest, fmt.Sprintf(overridesManifest, dir))
	if len(sc.wantError) > 0 {
		// A failed run must leave what was there before it untouched.
		writeTestFile(t, filepath.Join(dir, "a"), "pre-existing\n")
	}

	before := len(srv.quietRequests())
	stdout, stderr, wall, err := p.apply(manifest)
	summary := firstLine(stdout, "Notice: tuningbox::override_resources:")
	if len(sc.wantError) == 0 {
		if err != nil {
			t.Fatalf("puppet apply: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
		plans := func(logged []requestLog) []time.Duration {
			var planned []time.Duration
			for _, r := range logged {
				if r.Path == "/api/v1/config/overrides/apply" {
					planned = append(planned, r.Duration)
				}
			}
			return planned
		}
		planned := plans(srv.requestsSince(before, func(r []requestLog) bool { return len(plans(r)) > 0 }))
		if len(planned) != 1 {
			t.Errorf("the run asked for %d plans, want exactly 1", len(planned))
		}
		t.Logf("%5d ms  %s (plan: %v on the server)", wall.Milliseconds(), summary, planned)
	} else {
		if err == nil {
			t.Fatalf("puppet apply succeeded, want a failure naming %q\nstdout:\n%s", sc.wantError, stdout)
		}
		for _, want := range sc.wantError {
			if !strings.Contains(stderr, expand(want)) {
				t.Errorf("errors do not name %q:\n%s", expand(want), stderr)
			}
		}
		t.Logf("%5d ms  failed: %s", wall.Milliseconds(), firstLine(stderr, "tuningbox::override_resources"))
	}
	for name, want := range sc.want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case want == "" && err == nil:
			t.Errorf("%s exists, want it not created (content %q)", name, got)
		case want == "":
		case err != nil:
			t.Errorf("%s: %v, want %q", name, err, want)
		case want != "present" && string(got) != want:
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for name, want := range sc.wantMode {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("mode of %s = %v (%v), want %v", name, fi.Mode().Perm(), err, want)
		}
	}
}

// apply runs `puppet apply manifest` with the tuningbox module on the module path.
func (p *puppet) apply(manifest string) (stdout, stderr string, elapsed time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "puppet", "apply", manifest, "--verbose", "--hiera_config", p.hieraConfig,
		"--confdir", filepath.Join(p.dir, "conf"), "--vardir", filepath.Join(p.dir, "var"),
		"--codedir", filepath.Join(p.dir, "code"), "--environment", "production", "--color=false")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	return out.String(), errOut.String(), time.Since(start), err
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
