package authorizer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/crypto/bcrypt"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert/clientcerttest"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/authorizer"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/lambdatest"
)

const (
	adminUser     = "admin"
	adminPassword = "admin-secret"
)

// newStack is the whole application handler (every route's function) over a
// fresh embedded store with a bootstrap admin, and a client of it as that admin.
func newStack(t *testing.T) (*apptest.Stack, *client.Client) {
	t.Helper()
	st := apptest.New(t, adminUser, adminPassword, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(st.Handler)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithBasicAuth(adminUser, adminPassword))
	if err != nil {
		t.Fatal(err)
	}
	return st, c
}

// seedConfig creates a component with the astute resource and environment 1
// with a "nodes" level, registers nodes 7 and 8 there, and stores values for them.
func seedConfig(t *testing.T, c *client.Client) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateEnvironment(ctx, client.NewEnvironment{ID: 1, Components: []client.ID{"fuel"}, HierarchyLevels: []string{"nodes"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"7", "8"} {
		if _, err := c.CreateNode(ctx, client.NewNode{ID: client.ID(id), FQDN: "node-" + id + ".example.com", EnvironmentID: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	for levels, doc := range map[string]string{"": `{"region":"RegionOne"}`, "7": `{"debug":true}`, "8": `{"debug":false}`} {
		ref := client.DocumentRef{Environment: "1", Resource: "astute"}
		if levels != "" {
			ref.Levels = client.LevelPath{{Name: "nodes", Value: levels}}
		}
		if _, err := c.PutDocument(ctx, ref, client.Values, json.RawMessage(doc)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLambdaAuthorizer runs the authorizer on both event kinds, then hands its
// context to the route's function the way API Gateway does, and checks that
// the function trusts it for identity but still applies the policy per route.
func TestLambdaAuthorizer(t *testing.T) {
	s, admin := newStack(t)
	seedConfig(t, admin)
	ctx := context.Background()
	if _, err := admin.CreateUser(ctx, client.NewUser{Name: "watcher", Password: "watch-password", Role: "observer"}); err != nil {
		t.Fatal(err)
	}
	users := auth.NewService(s.Backend.Index, auth.WithBcryptCost(bcrypt.MinCost))
	logs := &bytes.Buffer{}
	a := authorizer.New(authapi.New(users, audit.New(s.Backend.Index, nil), nil, slog.New(slog.NewJSONHandler(logs, nil))))

	httpAPIEvent := func(header string) json.RawMessage {
		ev := map[string]any{"version": "2.0", "type": "REQUEST", "routeKey": "$default", "rawPath": "/api/v1/config/components",
			"headers":        map[string]string{"authorization": header},
			"requestContext": map[string]any{"http": map[string]any{"method": "GET", "sourceIp": "198.51.100.7"}}}
		if header == "" {
			ev["headers"] = map[string]string{}
		}
		return lambdatest.RoundTrip[json.RawMessage](t, ev)
	}
	out, err := a.Invoke(ctx, httpAPIEvent(lambdatest.BasicHeader("watcher", "watch-password")))
	if err != nil {
		t.Fatal(err)
	}
	allowed := lambdatest.RoundTrip[events.APIGatewayV2CustomAuthorizerSimpleResponse](t, out)
	if !allowed.IsAuthorized || allowed.Context["tuningbox_user"] != "watcher" || allowed.Context["tuningbox_role"] != "observer" {
		t.Fatalf("HTTP API answer for good credentials: %+v", allowed)
	}
	for _, header := range []string{lambdatest.BasicHeader("watcher", "nope"), "", "Bearer tbx_unknown"} {
		out, err := a.Invoke(ctx, httpAPIEvent(header))
		if err != nil {
			t.Fatal(err)
		}
		if denied := lambdatest.RoundTrip[events.APIGatewayV2CustomAuthorizerSimpleResponse](t, out); denied.IsAuthorized || denied.Context != nil {
			t.Fatalf("HTTP API answer for %q: %+v", header, denied)
		}
	}
	if !strings.Contains(logs.String(), `"remote":"198.51.100.7"`) || strings.Contains(logs.String(), "nope") {
		t.Fatalf("failed logins logged as: %s", logs.String())
	}

	const methodArn = "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/GET/api/v1/config/components"
	restEvent := func(header string) json.RawMessage {
		return lambdatest.RoundTrip[json.RawMessage](t, map[string]any{"type": "REQUEST", "methodArn": methodArn, "httpMethod": "GET",
			"path": "/api/v1/config/components", "headers": map[string]string{"Authorization": header}})
	}
	out, err = a.Invoke(ctx, restEvent(lambdatest.BasicHeader(adminUser, adminPassword)))
	if err != nil {
		t.Fatal(err)
	}
	policy := lambdatest.RoundTrip[events.APIGatewayCustomAuthorizerResponse](t, out)
	st := policy.PolicyDocument.Statement
	if policy.PrincipalID != adminUser || len(st) != 1 || st[0].Effect != "Allow" ||
		st[0].Resource[0] != "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/*" || policy.Context["tuningbox_role"] != "admin" {
		t.Fatalf("REST API answer for good credentials: %+v", policy)
	}
	if _, err := a.Invoke(ctx, restEvent(lambdatest.BasicHeader(adminUser, "nope"))); err == nil || err.Error() != "Unauthorized" {
		t.Fatalf("REST API answer for bad credentials: %v (want the error Unauthorized, API Gateway's 401)", err)
	}

	// The route's function: the observer's authorizer context is identity
	// enough, yet a write is still forbidden.
	function := lambdaadapter.New(s.Handler, slog.New(slog.DiscardHandler))
	call := func(method, path string, authorizer map[string]any, body string) events.APIGatewayV2HTTPResponse {
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path, Body: body,
			Headers: map[string]string{"content-type": "application/json"}}
		ev.RequestContext.HTTP.Method = method
		ev.RequestContext.Stage = "$default"
		if authorizer != nil {
			ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: authorizer}
		}
		return function.ServeV2(ctx, lambdatest.RoundTrip[events.APIGatewayV2HTTPRequest](t, ev))
	}
	if r := call("GET", "/api/v1/config/components", allowed.Context, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("read with the authorizer's context: %d %s", r.StatusCode, r.Body)
	}
	if r := call("POST", "/api/v1/config/components", allowed.Context, `{"name":"x"}`); r.StatusCode != http.StatusForbidden {
		t.Fatalf("observer write with the authorizer's context: %d %s", r.StatusCode, r.Body)
	}
	if r := call("GET", "/api/v1/config/components", nil, ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no authorizer, no credentials: %d %s", r.StatusCode, r.Body)
	}
	forged := map[string]any{"tuningbox_user": "x", "tuningbox_role": "root"}
	if r := call("GET", "/api/v1/config/components", forged, ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unknown role in the context: %d %s", r.StatusCode, r.Body)
	}
}

// staticNodes resolves node references from a fixed table (the registry's part in shared/app).
type staticNodes map[string]auth.NodeIdentity

func (n staticNodes) NodeNames(_ context.Context, ref string) (auth.NodeIdentity, error) {
	if node, ok := n[ref]; ok {
		return node, nil
	}
	return auth.NodeIdentity{}, errs.NotFoundf("node %q not found", ref)
}

// TestLambdaAuthorizerClientCertificate: behind API Gateway's mutual TLS the
// verified certificate reaches the authorizer in the request context; its
// certname is the registered node (confined to its own data by the route's
// function) or, for a server certname, an observer.
func TestLambdaAuthorizerClientCertificate(t *testing.T) {
	s, admin := newStack(t)
	seedConfig(t, admin)
	ca := clientcerttest.New(t, "puppet.example.com")
	pemOf := func(certname string) string {
		raw, err := os.ReadFile(ca.Issue(certname).CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	users := auth.NewService(s.Backend.Index, auth.WithBcryptCost(bcrypt.MinCost),
		auth.WithNodeNames(staticNodes{"node-7.example.com": {Names: []string{"7", "node-7.example.com"}, Environment: []string{"1"}}}),
		auth.WithServerCertnames([]string{"puppet.example.com"}))
	a := authorizer.New(authapi.New(users, audit.New(s.Backend.Index, nil), nil, slog.New(slog.DiscardHandler)))
	ctx := context.Background()

	httpAPI := func(certPEM string) events.APIGatewayV2CustomAuthorizerSimpleResponse {
		ev := map[string]any{"version": "2.0", "type": "REQUEST", "routeKey": "$default", "rawPath": "/api/v1/config/environments/1/nodes/7/resources/astute/values",
			"headers": map[string]string{},
			"requestContext": map[string]any{"http": map[string]any{"method": "GET", "sourceIp": "198.51.100.7"},
				"authentication": map[string]any{"clientCert": map[string]any{"clientCertPem": certPEM, "subjectDN": "CN=ignored"}}}}
		out, err := a.Invoke(ctx, lambdatest.RoundTrip[json.RawMessage](t, ev))
		if err != nil {
			t.Fatal(err)
		}
		return lambdatest.RoundTrip[events.APIGatewayV2CustomAuthorizerSimpleResponse](t, out)
	}
	node := httpAPI(pemOf("node-7.example.com"))
	if !node.IsAuthorized || node.Context["tuningbox_role"] != "node" || node.Context["tuningbox_user"] != "cert:node-7.example.com" {
		t.Fatalf("node certificate: %+v", node)
	}
	server := httpAPI(pemOf("puppet.example.com"))
	if !server.IsAuthorized || server.Context["tuningbox_role"] != "observer" {
		t.Fatalf("server certificate: %+v", server)
	}
	for _, certname := range []string{"node-9.example.com", "7"} {
		if a := httpAPI(pemOf(certname)); a.IsAuthorized {
			t.Fatalf("certificate of %q (no registered FQDN): %+v", certname, a)
		}
	}

	rest := map[string]any{"type": "REQUEST", "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/GET/api/v1/nodes",
		"httpMethod": "GET", "path": "/api/v1/nodes", "headers": map[string]string{},
		"requestContext": map[string]any{"identity": map[string]any{"sourceIp": "198.51.100.7", "clientCert": map[string]any{"clientCertPem": pemOf("node-7.example.com")}}}}
	out, err := a.Invoke(ctx, lambdatest.RoundTrip[json.RawMessage](t, rest))
	if err != nil {
		t.Fatal(err)
	}
	if policy := lambdatest.RoundTrip[events.APIGatewayCustomAuthorizerResponse](t, out); policy.Context["tuningbox_role"] != "node" {
		t.Fatalf("REST API answer for a node certificate: %+v", policy)
	}

	// The route's function confines the node's identity to its own documents.
	function := lambdaadapter.New(s.Handler, slog.New(slog.DiscardHandler))
	call := func(path string, authorizer map[string]any) int {
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path}
		ev.RequestContext.HTTP.Method = "GET"
		ev.RequestContext.Stage = "$default"
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: authorizer}
		return function.ServeV2(ctx, lambdatest.RoundTrip[events.APIGatewayV2HTTPRequest](t, ev)).StatusCode
	}
	const own, other = "/api/v1/config/environments/1/nodes/7/resources/astute/values", "/api/v1/config/environments/1/nodes/8/resources/astute/values"
	if got := []int{call(own, node.Context), call(other, node.Context), call(other, server.Context)}; got[0] != 200 || got[1] != 403 || got[2] != 200 {
		t.Fatalf("own, other node's, server on other node's: %v, want [200 403 200]", got)
	}
}

// A throttled login fails the authorizer instead of denying: API Gateway
// caches a denial for the Authorization header's TTL, so the right password
// would be refused for minutes after the throttle lets it through.
func TestThrottledLoginIsNoCachedDenial(t *testing.T) {
	s, admin := newStack(t)
	if _, err := admin.CreateUser(context.Background(), client.NewUser{Name: "watcher", Password: "watch-password", Role: "observer"}); err != nil {
		t.Fatal(err)
	}
	users := auth.NewService(s.Backend.Index, auth.WithBcryptCost(bcrypt.MinCost))
	a := authorizer.New(authapi.New(users, audit.New(s.Backend.Index, nil), nil, slog.New(slog.DiscardHandler)))
	answer := func(password string) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
		return a.AnswerHTTPAPI(context.Background(), events.APIGatewayV2CustomAuthorizerV2Request{
			Version: "2.0", Type: "REQUEST",
			Headers:        map[string]string{"authorization": lambdatest.BasicHeader("watcher", password)},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{SourceIP: "198.51.100.9"}},
		})
	}
	var throttled error
	for range 100 {
		denied, err := answer("guess")
		if err != nil {
			throttled = err
			break
		}
		if denied.IsAuthorized {
			t.Fatal("a wrong password was authorized")
		}
	}
	if !errs.Is(throttled, errs.TooManyRequests) {
		t.Fatalf("100 wrong passwords: the last answer's error %v, want a throttle", throttled)
	}
	if got, err := answer("watch-password"); !errs.Is(err, errs.TooManyRequests) || got.IsAuthorized {
		t.Fatalf("right password while throttled: %+v, %v; want the throttle's error, which API Gateway does not cache", got, err)
	}
}
