package authapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/crypto/bcrypt"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert/clientcerttest"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
)

func basicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// roundTrip passes v through JSON, as API Gateway passes events and answers.
func roundTrip[T any](t *testing.T, v any) T {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLambdaAuthorizer runs the authorizer on both event kinds, then hands its
// context to the route's function the way API Gateway does, and checks that
// the function trusts it for identity but still applies the policy per route.
func TestLambdaAuthorizer(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "watcher", "password": "watch-password", "role": "observer"}, http.StatusCreated)
	users := auth.NewService(s.backend.Index, auth.WithBcryptCost(bcrypt.MinCost))
	logs := &syncBuffer{}
	m := authapi.New(users, audit.New(s.backend.Index, nil), nil, slog.New(slog.NewJSONHandler(logs, nil)))
	ctx := context.Background()

	httpAPIEvent := func(header string) json.RawMessage {
		ev := map[string]any{"version": "2.0", "type": "REQUEST", "routeKey": "$default", "rawPath": "/api/v1/config/components",
			"headers":        map[string]string{"authorization": header},
			"requestContext": map[string]any{"http": map[string]any{"method": "GET", "sourceIp": "198.51.100.7"}}}
		if header == "" {
			ev["headers"] = map[string]string{}
		}
		return roundTrip[json.RawMessage](t, ev)
	}
	out, err := m.AuthorizeEvent(ctx, httpAPIEvent(basicHeader("watcher", "watch-password")))
	if err != nil {
		t.Fatal(err)
	}
	allowed := roundTrip[events.APIGatewayV2CustomAuthorizerSimpleResponse](t, out)
	if !allowed.IsAuthorized || allowed.Context["tuningbox_user"] != "watcher" || allowed.Context["tuningbox_role"] != "observer" {
		t.Fatalf("HTTP API answer for good credentials: %+v", allowed)
	}
	for _, header := range []string{basicHeader("watcher", "nope"), "", "Bearer tbx_unknown"} {
		out, err := m.AuthorizeEvent(ctx, httpAPIEvent(header))
		if err != nil {
			t.Fatal(err)
		}
		if denied := roundTrip[events.APIGatewayV2CustomAuthorizerSimpleResponse](t, out); denied.IsAuthorized || denied.Context != nil {
			t.Fatalf("HTTP API answer for %q: %+v", header, denied)
		}
	}
	if !strings.Contains(logs.String(), `"remote":"198.51.100.7"`) || strings.Contains(logs.String(), "nope") {
		t.Fatalf("failed logins logged as: %s", logs.String())
	}

	const methodArn = "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/GET/api/v1/config/components"
	restEvent := func(header string) json.RawMessage {
		return roundTrip[json.RawMessage](t, map[string]any{"type": "REQUEST", "methodArn": methodArn, "httpMethod": "GET",
			"path": "/api/v1/config/components", "headers": map[string]string{"Authorization": header}})
	}
	out, err = m.AuthorizeEvent(ctx, restEvent(basicHeader(adminUser, adminPassword)))
	if err != nil {
		t.Fatal(err)
	}
	policy := roundTrip[events.APIGatewayCustomAuthorizerResponse](t, out)
	st := policy.PolicyDocument.Statement
	if policy.PrincipalID != adminUser || len(st) != 1 || st[0].Effect != "Allow" ||
		st[0].Resource[0] != "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/*" || policy.Context["tuningbox_role"] != "admin" {
		t.Fatalf("REST API answer for good credentials: %+v", policy)
	}
	if _, err := m.AuthorizeEvent(ctx, restEvent(basicHeader(adminUser, "nope"))); err == nil || err.Error() != "Unauthorized" {
		t.Fatalf("REST API answer for bad credentials: %v (want the error Unauthorized, API Gateway's 401)", err)
	}

	// The route's function: the observer's authorizer context is identity
	// enough, yet a write is still forbidden.
	function := lambdaadapter.New(s.handler, slog.New(slog.DiscardHandler))
	call := func(method, path string, authorizer map[string]any, body string) events.APIGatewayV2HTTPResponse {
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path, Body: body,
			Headers: map[string]string{"content-type": "application/json"}}
		ev.RequestContext.HTTP.Method = method
		ev.RequestContext.Stage = "$default"
		if authorizer != nil {
			ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: authorizer}
		}
		return function.ServeV2(ctx, roundTrip[events.APIGatewayV2HTTPRequest](t, ev))
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

// TestFailedLoginsAreLogged: user, remote address and a running count, never the password.
func TestFailedLoginsAreLogged(t *testing.T) {
	s := newStack(t)
	for i := range 3 {
		s.must(t, basicAuth("mallory", "guess-"+string(rune('a'+i))), "GET", "/api/v1/config/components", nil, http.StatusUnauthorized)
	}
	s.must(t, bearer("tbx_guessedtoken"), "GET", "/api/v1/config/components", nil, http.StatusUnauthorized)
	var failures []map[string]any
	for line := range strings.Lines(s.logs.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "login failed" {
			failures = append(failures, rec)
		}
	}
	if len(failures) != 4 {
		t.Fatalf("%d failed logins logged: %s", len(failures), s.logs.String())
	}
	if f := failures[2]; f["user"] != "mallory" || f["remote"] != "192.0.2.10:4242" || f["failed_logins_total"] != 3.0 || f["scheme"] != "Basic" {
		t.Fatalf("third failure logged as %v", f)
	}
	if f := failures[3]; f["scheme"] != "Bearer" || f["failed_logins_total"] != 4.0 {
		t.Fatalf("token failure logged as %v", f)
	}
	if strings.Contains(s.logs.String(), "guess-") || strings.Contains(s.logs.String(), "guessedtoken") {
		t.Fatal("a secret reached the log")
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
	s := newStack(t)
	s.seedConfig(t)
	ca := clientcerttest.New(t, "puppet.example.com")
	pemOf := func(certname string) string {
		raw, err := os.ReadFile(ca.Issue(certname).CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	users := auth.NewService(s.backend.Index, auth.WithBcryptCost(bcrypt.MinCost),
		auth.WithNodeNames(staticNodes{"node-7.example.com": {Names: []string{"7", "node-7.example.com"}, Environment: []string{"1"}}}),
		auth.WithServerCertnames([]string{"puppet.example.com"}))
	m := authapi.New(users, audit.New(s.backend.Index, nil), nil, slog.New(slog.DiscardHandler))
	ctx := context.Background()

	httpAPI := func(certPEM string) events.APIGatewayV2CustomAuthorizerSimpleResponse {
		ev := map[string]any{"version": "2.0", "type": "REQUEST", "routeKey": "$default", "rawPath": "/api/v1/config/environments/1/nodes/7/resources/astute/values",
			"headers": map[string]string{},
			"requestContext": map[string]any{"http": map[string]any{"method": "GET", "sourceIp": "198.51.100.7"},
				"authentication": map[string]any{"clientCert": map[string]any{"clientCertPem": certPEM, "subjectDN": "CN=ignored"}}}}
		out, err := m.AuthorizeEvent(ctx, roundTrip[json.RawMessage](t, ev))
		if err != nil {
			t.Fatal(err)
		}
		return roundTrip[events.APIGatewayV2CustomAuthorizerSimpleResponse](t, out)
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
	out, err := m.AuthorizeEvent(ctx, roundTrip[json.RawMessage](t, rest))
	if err != nil {
		t.Fatal(err)
	}
	if policy := roundTrip[events.APIGatewayCustomAuthorizerResponse](t, out); policy.Context["tuningbox_role"] != "node" {
		t.Fatalf("REST API answer for a node certificate: %+v", policy)
	}

	// The route's function confines the node's identity to its own documents.
	function := lambdaadapter.New(s.handler, slog.New(slog.DiscardHandler))
	call := func(path string, authorizer map[string]any) int {
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path}
		ev.RequestContext.HTTP.Method = "GET"
		ev.RequestContext.Stage = "$default"
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: authorizer}
		return function.ServeV2(ctx, roundTrip[events.APIGatewayV2HTTPRequest](t, ev)).StatusCode
	}
	const own, other = "/api/v1/config/environments/1/nodes/7/resources/astute/values", "/api/v1/config/environments/1/nodes/8/resources/astute/values"
	if got := []int{call(own, node.Context), call(other, node.Context), call(other, server.Context)}; got[0] != 200 || got[1] != 403 || got[2] != 200 {
		t.Fatalf("own, other node's, server on other node's: %v, want [200 403 200]", got)
	}
}
