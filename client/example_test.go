package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// exampleServer serves the whole tuningbox handler, over an in-memory store,
// on a loopback test server with admin/admin-password as its administrator;
// stop closes it.
func exampleServer() (url string, stop func()) {
	h, _, err := apptest.Handler(mem.New(), "admin", "admin-password", slog.New(slog.DiscardHandler))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	return srv.URL, srv.Close
}

// The ConfigDB in a few calls: a component with one resource (astute), an
// environment with a node level, a node registered in it, the
// environment-wide values, the node's own values (the node named by its
// FQDN), and what that node gets: every level merged.
func Example() {
	url, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.New(url, client.WithBasicAuth("admin", "admin-password"))
	if err != nil {
		log.Fatal(err)
	}
	comp, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}})
	if err != nil {
		log.Fatal(err)
	}
	env, err := c.CreateEnvironment(ctx, client.NewEnvironment{Components: []client.ID{comp.ID}, HierarchyLevels: []string{"nodes"}})
	if err != nil {
		log.Fatal(err)
	}
	node, err := c.CreateNode(ctx, client.NewNode{ID: "7", FQDN: "node-7.example.com", EnvironmentID: env.ID, Roles: []string{"compute"}, Traits: []string{}})
	if err != nil {
		log.Fatal(err)
	}
	global := client.DocumentRef{Environment: string(env.ID), Resource: "astute"}
	node7 := client.DocumentRef{Environment: string(env.ID), Levels: client.LevelPath{{Name: "nodes", Value: node.FQDN}}, Resource: "astute"}
	if _, err := c.PutDocument(ctx, global, client.Values, json.RawMessage(`{"debug": false, "ntp": ["pool.ntp.org"]}`)); err != nil {
		log.Fatal(err)
	}
	version, err := c.PutDocument(ctx, node7, client.Values, json.RawMessage(`{"debug": true}`))
	if err != nil {
		log.Fatal(err)
	}
	effective, err := c.Document(ctx, node7, client.Values, client.DocumentQuery{Effective: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("node 7's values: version", version)
	fmt.Println("node 7 gets:", string(effective.Body))
	// Output:
	// node 7's values: version 1
	// node 7 gets: {"debug":true,"ntp":["pool.ntp.org"]}
}

// SetKeys changes some keys of a stored document and makes a new version. Up
// to microversion 1.3 every key but the last must exist, as in tuning-box;
// from 1.4 the objects missing on the path are created.
func ExampleClient_SetKeys() {
	url, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.New(url, client.WithBasicAuth("admin", "admin-password"))
	if err != nil {
		log.Fatal(err)
	}
	comp, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}})
	if err != nil {
		log.Fatal(err)
	}
	env, err := c.CreateEnvironment(ctx, client.NewEnvironment{Components: []client.ID{comp.ID}, HierarchyLevels: []string{}})
	if err != nil {
		log.Fatal(err)
	}
	global := client.DocumentRef{Environment: string(env.ID), Resource: "astute"}
	if _, err := c.PutDocument(ctx, global, client.Values, json.RawMessage(`{"nova": {"workers": 4}}`)); err != nil {
		log.Fatal(err)
	}

	version, err := c.SetKeys(ctx, global, client.Values, []client.KeySet{{Path: client.KeyPath{"nova", "workers"}, Value: 8}})
	fmt.Println("set nova.workers: version", version, err)
	_, err = c.SetKeys(ctx, global, client.Values, []client.KeySet{{Path: client.KeyPath{"glance", "cache", "size"}, Value: 1024}})
	fmt.Println("set glance.cache.size at 1.0: conflict:", errors.Is(err, client.ErrConflict))

	// From microversion 1.2 an environment is named by its UUID.
	global.Environment = env.UUID
	version, err = c.At("1.4").SetKeys(ctx, global, client.Values, []client.KeySet{{Path: client.KeyPath{"glance", "cache", "size"}, Value: 1024}})
	fmt.Println("set glance.cache.size at 1.4: version", version, err)
	doc, err := c.Document(ctx, global, client.Values, client.DocumentQuery{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(doc.Body))
	// Output:
	// set nova.workers: version 2 <nil>
	// set glance.cache.size at 1.0: conflict: true
	// set glance.cache.size at 1.4: version 3 <nil>
	// {"glance":{"cache":{"size":1024}},"nova":{"workers":8}}
}

// Every answer outside 2xx is an *Error: errors.Is matches it against the
// kinds, and errors.As gives its status and the server's message.
func ExampleError() {
	url, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.New(url, client.WithBasicAuth("admin", "admin-password"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Environment(ctx, "42")
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, errors.Is(err, client.ErrNotFound))
	}
	stranger, err := client.New(url, client.WithBasicAuth("admin", "wrong password"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = stranger.Environments(ctx)
	fmt.Println("wrong password:", errors.Is(err, client.ErrUnauthorized))
	// Output:
	// 404 true
	// wrong password: true
}

// Document reads a document in the form its DocumentQuery asks for: the
// latest version, an older one, or one value by its dot key path.
func ExampleClient_Document() {
	url, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	c, err := client.New(url, client.WithBasicAuth("admin", "admin-password"))
	if err != nil {
		log.Fatal(err)
	}
	comp, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}})
	if err != nil {
		log.Fatal(err)
	}
	env, err := c.CreateEnvironment(ctx, client.NewEnvironment{Components: []client.ID{comp.ID}, HierarchyLevels: []string{}})
	if err != nil {
		log.Fatal(err)
	}
	global := client.DocumentRef{Environment: string(env.ID), Resource: "astute"}
	for _, doc := range []string{`{"ntp": {"servers": ["0.pool"]}}`, `{"ntp": {"servers": ["0.pool", "1.pool"]}}`} {
		if _, err := c.PutDocument(ctx, global, client.Values, json.RawMessage(doc)); err != nil {
			log.Fatal(err)
		}
	}
	for _, read := range []struct {
		name  string
		query client.DocumentQuery
	}{
		{"latest", client.DocumentQuery{}},
		{"version 1", client.DocumentQuery{Version: 1}},
		{"key ntp.servers.1", client.DocumentQuery{Key: "ntp.servers.1"}},
	} {
		doc, err := c.Document(ctx, global, client.Values, read.query)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", read.name, doc.Body)
	}
	// Output:
	// latest: {"ntp":{"servers":["0.pool","1.pool"]}}
	// version 1: {"ntp":{"servers":["0.pool"]}}
	// key ntp.servers.1: "1.pool"
}
