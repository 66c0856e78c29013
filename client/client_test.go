package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

var kinds = []error{
	client.ErrInvalid, client.ErrUnauthorized, client.ErrForbidden, client.ErrNotFound, client.ErrMethodNotAllowed,
	client.ErrNotAcceptable, client.ErrConflict, client.ErrPreconditionFailed, client.ErrTooLarge,
	client.ErrUnsupportedMediaType, client.ErrTooManyRequests, client.ErrInternal, client.ErrUnavailable,
}

// matching lists the kinds err is.
func matching(err error) []error {
	var out []error
	for _, k := range kinds {
		if errors.Is(err, k) {
			out = append(out, k)
		}
	}
	return out
}

// Every error kind of the server, through the server's one status mapping,
// is exactly one kind of the client, and no two server kinds share one.
func TestErrorKindsMirrorTheServer(t *testing.T) {
	seen := map[error]errs.Kind{}
	for k := errs.Internal; k <= errs.TooManyRequests; k++ {
		status := httpapi.StatusOf(errs.New(k, "x"))
		got := matching(&client.Error{Status: status})
		if len(got) != 1 {
			t.Fatalf("server kind %d (HTTP %d) is client kinds %v, want exactly one", k, status, got)
		}
		if prev, ok := seen[got[0]]; ok {
			t.Errorf("server kinds %d and %d are both %v", prev, k, got[0])
		}
		seen[got[0]] = k
	}
	// A deadline the server ran out of, and a 5xx it has no kind for.
	if got := matching(&client.Error{Status: httpapi.StatusOf(context.DeadlineExceeded)}); len(got) != 1 || got[0] != client.ErrUnavailable {
		t.Errorf("deadline: %v", got)
	}
	if got := matching(&client.Error{Status: http.StatusBadGateway}); len(got) != 1 || got[0] != client.ErrInternal {
		t.Errorf("502: %v", got)
	}
	if client.IsTemporary(&client.Error{Status: http.StatusConflict}) || !client.IsTemporary(&client.Error{Status: http.StatusBadGateway}) ||
		client.IsTemporary(context.Canceled) || client.IsTemporary(nil) {
		t.Error("IsTemporary: only failures to reach the server and 5xx are temporary")
	}
}

func TestIDJSON(t *testing.T) {
	for _, tt := range []struct {
		id   client.ID
		json string
	}{{"7", `7`}, {"0b9a3c1e-6f1d-4b7e-9a51-1c0f2b3d4e5f", `"0b9a3c1e-6f1d-4b7e-9a51-1c0f2b3d4e5f"`}, {"fuel", `"fuel"`}} {
		b, err := json.Marshal(tt.id)
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal(%q) = %s, %v; want %s", tt.id, b, err, tt.json)
		}
		var back client.ID
		if err := json.Unmarshal(b, &back); err != nil || back != tt.id {
			t.Errorf("Unmarshal(%s) = %q, %v", b, back, err)
		}
	}
}

const admin, password = "admin", "admin-password"

// The client against the whole API in process: typed calls, the error kinds
// the server answers, microversions, Basic auth and tokens.
func TestClientAgainstTheServer(t *testing.T) {
	ctx := context.Background()
	url := apptest.Server(t, admin, password)
	c, err := client.New(url, client.WithBasicAuth(admin, password))
	if err != nil {
		t.Fatal(err)
	}

	comp, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Name != "fuel" || len(comp.ResourceDefinitions) != 1 || comp.ResourceDefinitions[0].Name != "astute" || comp.UUID == "" {
		t.Fatalf("component: %+v", comp)
	}
	if _, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel"}); !errors.Is(err, client.ErrConflict) {
		t.Errorf("duplicate component: %v, want ErrConflict", err)
	}
	if _, err := c.Component(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown component: %v, want ErrNotFound", err)
	}
	env, err := c.CreateEnvironment(ctx, client.NewEnvironment{Components: []client.ID{comp.ID}, HierarchyLevels: []string{"nodes"}})
	if err != nil {
		t.Fatal(err)
	}
	// From microversion 1.2 on an id is the UUID.
	at12, err := c.At("1.2").Environment(ctx, env.UUID)
	if err != nil || string(at12.ID) != env.UUID || at12.UUID != "" {
		t.Fatalf("environment at 1.2: %+v, %v", at12, err)
	}
	if _, err := c.At("9.9").Environments(ctx); !errors.Is(err, client.ErrNotAcceptable) {
		t.Errorf("microversion 9.9: %v, want ErrNotAcceptable", err)
	}

	node, err := c.CreateNode(ctx, client.NewNode{ID: "7", FQDN: "node-7.example.com", EnvironmentID: env.ID, Roles: []string{"compute"}, Traits: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	ref := client.DocumentRef{Environment: string(env.ID), Levels: client.LevelPath{{Name: "nodes", Value: "7"}}, Resource: "astute"}
	global := client.DocumentRef{Environment: string(env.ID), Resource: "astute"}
	if v, err := c.PutDocument(ctx, global, client.Values, json.RawMessage(`{"a":1,"b":{"c":2}}`)); err != nil || v != 1 {
		t.Fatalf("put: version %d, %v", v, err)
	}
	if v, err := c.PutDocument(ctx, ref, client.Values, json.RawMessage(`{"a":3}`)); err != nil || v != 1 {
		t.Fatalf("put at nodes=7: version %d, %v", v, err)
	}
	if v, err := c.SetKeys(ctx, global, client.Values, []client.KeySet{{Path: client.KeyPath{"b", "c"}, Value: 4}}); err != nil || v != 2 {
		t.Fatalf("set keys: version %d, %v", v, err)
	}
	doc, err := c.Document(ctx, ref, client.Values, client.DocumentQuery{Effective: true})
	if err != nil || string(doc.Body) != `{"a":3,"b":{"c":4}}` || doc.ETag == "" {
		t.Fatalf("effective: %s %q, %v", doc.Body, doc.ETag, err)
	}
	v13 := c.At("1.3")
	ref13 := global
	ref13.Environment = env.UUID
	now, err := v13.Document(ctx, ref13, client.Values, client.DocumentQuery{Effective: true})
	if err != nil {
		t.Fatal(err)
	}
	// A watch of an unchanged document ends without it.
	same, err := v13.Document(ctx, ref13, client.Values, client.DocumentQuery{Effective: true, Wait: time.Second, IfNoneMatch: now.ETag})
	if err != nil || !same.NotModified || len(same.Body) != 0 {
		t.Errorf("watch: %+v, %v; want not modified", same, err)
	}
	p, err := v13.PreviewDeleteKeys(ctx, ref13, client.Values, []client.KeyPath{{"a"}})
	if err != nil || p.Version != 3 {
		t.Fatalf("dry run: %+v, %v", p, err)
	}
	versions, err := c.DocumentVersions(ctx, global, client.Values)
	if err != nil || len(versions) != 2 {
		t.Fatalf("versions: %+v, %v", versions, err)
	}
	d, err := v13.DiffDocuments(ctx, client.DiffSide{Environment: env.UUID, Levels: map[string]string{}, Resource: "astute", Version: 1},
		client.DiffSide{Environment: env.UUID, Levels: map[string]string{}, Resource: "astute"})
	if err != nil || len(d.Changed) != 1 || d.Changed["b.c"].To != float64(4) {
		t.Fatalf("diff: %+v, %v", d, err)
	}
	if _, err := c.PutDocument(ctx, global, client.Values, json.RawMessage(`{"a":`)); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("bad JSON: %v, want ErrInvalid", err)
	}

	found, err := c.NodeByFQDN(ctx, "NODE-7.example.com.")
	if err != nil || found.UUID != node.UUID || found.ID != "7" {
		t.Fatalf("node by FQDN: %+v, %v", found, err)
	}
	if _, err := c.NodeByFQDN(ctx, "node-8.example.com"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown FQDN: %v, want ErrNotFound", err)
	}

	// Users and tokens: an observer reads but may not write; a token acts as its user.
	if _, err := c.CreateUser(ctx, client.NewUser{Name: "watcher", Password: "watcher-password", Role: "observer"}); err != nil {
		t.Fatal(err)
	}
	observer, err := client.New(url, client.WithBasicAuth("watcher", "watcher-password"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := observer.Components(ctx); err != nil {
		t.Errorf("observer reads: %v", err)
	}
	if _, err := observer.CreateComponent(ctx, client.NewComponent{Name: "other"}); !errors.Is(err, client.ErrForbidden) {
		t.Errorf("observer writes: %v, want ErrForbidden", err)
	}
	tok, err := c.CreateToken(ctx, "watcher", "tests")
	if err != nil || tok.Secret == "" || tok.Token.User != "watcher" {
		t.Fatalf("token: %+v, %v", tok, err)
	}
	byToken, err := client.New(url, client.WithToken(tok.Secret))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := byToken.Nodes(ctx, client.NodeQuery{}); err != nil {
		t.Errorf("token reads: %v", err)
	}
	if err := c.RevokeToken(ctx, tok.Token.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := byToken.Nodes(ctx, client.NodeQuery{}); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("revoked token: %v, want ErrUnauthorized", err)
	}
	anonymous, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *client.Error
	if _, err := anonymous.Components(ctx); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Message == "" {
		t.Errorf("no credentials: %v, want a 401 with the server's message", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for name, try := range map[string]func() error{
		"ftp URL": func() error { _, err := client.New("ftp://example.com"); return err },
		"cert without key": func() error {
			_, err := client.New("https://127.0.0.1", client.WithClientCertFiles("cert.pem", ""))
			return err
		},
	} {
		if err := try(); !errors.Is(err, client.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
}

// serialized_tasks and a transaction's plan too large for one page are read
// whole, page after page.
func TestGraphListingsPageTransparently(t *testing.T) {
	ctx := context.Background()
	url := apptest.Server(t, admin, password)
	c, err := client.New(url, client.WithBasicAuth(admin, password))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := c.CreateEnvironment(ctx, client.NewEnvironment{Components: []client.ID{comp.ID}, HierarchyLevels: []string{"nodes"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if _, err := c.CreateNode(ctx, client.NewNode{ID: client.ID(fmt.Sprint(i + 1)), FQDN: fmt.Sprintf("node-%d.example.com", i+1), EnvironmentID: env.ID, Roles: []string{"compute"}, Traits: []string{}}); err != nil {
			t.Fatal(err)
		}
	}
	// ~800 KB of parameters per node: seven nodes take two pages.
	tasks := fmt.Sprintf(`{"tasks":[{"id":"a","type":"shell","parameters":{"cmd":"true"}},{"id":"b","type":"shell","requires":["a"],"parameters":{"cmd":%q}}]}`, strings.Repeat("x", 800<<10))
	if _, err := c.CreateGraph(ctx, "clusters", string(env.ID), "default", json.RawMessage(tasks), false); err != nil {
		t.Fatal(err)
	}
	first, err := c.Do(ctx, client.Request{Method: "GET", Path: "/api/v1/clusters/" + string(env.ID) + "/serialized_tasks"})
	if err != nil || !strings.Contains(string(first.Body), `"rel":"next"`) {
		t.Fatalf("the first page links no next page (%v)", err)
	}
	all, err := c.SerializedTasks(ctx, string(env.ID), client.PlanQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Nodes) != 7 || all.Nodes[6].Node != "7" || len(all.Nodes[6].Tasks) != 2 || all.Links != nil {
		t.Fatalf("serialized_tasks read page by page: %d nodes", len(all.Nodes))
	}
	tx, err := c.Execute(ctx, client.ExecuteRequest{Cluster: &env.ID, Graphs: []client.GraphRun{{Type: "default"}}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.TransactionPlan(ctx, tx.SubTransactions[0].UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.NodeTasks) != 7 || len(plan.Skipped) != 7 || len(plan.NodeTasks["7"]) != 2 || len(plan.Nodes) != 7 {
		t.Fatalf("the plan read page by page: %d nodes' tasks", len(plan.NodeTasks))
	}
}
