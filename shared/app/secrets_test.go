package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// secrets is a SecretReader over fixed values.
func secrets(values map[string]string) SecretReader {
	return func(_ context.Context, arn string) (string, error) {
		v, ok := values[arn]
		if !ok {
			return "", errors.New("no such secret")
		}
		return v, nil
	}
}

// The first administrator comes from the secret at create, is not replaced
// by a later update once its password changed, and stays on delete.
func TestFirstAdministrator(t *testing.T) {
	b := mem.New()
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tuningbox-admin"
	read := secrets(map[string]string{arn: `{"username":"admin","password":"generated-password-1"}`})
	create := FirstAdministrator(b.Index, read, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	ev := cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: map[string]any{AdminSecretProperty: arn}}
	id, data, err := create(ctx, ev)
	if err != nil || id != "administrator/admin" || data["UserName"] != "admin" {
		t.Fatalf("create: %q %v %v", id, data, err)
	}
	users := auth.NewService(b.Index)
	if p, err := users.VerifyPassword(ctx, "admin", "generated-password-1"); err != nil || p.Role != auth.Admin {
		t.Fatalf("the generated password: %+v %v", p, err)
	}

	// The operator changes the password: an update (or a second create) keeps it.
	if err := users.DeleteUser(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := users.CreateUser(ctx, auth.NewUser{Name: "admin", Password: "changed-password-2", Role: auth.Admin}); err != nil {
		t.Fatal(err)
	}
	ev.RequestType = cfn.RequestUpdate
	if _, _, err := create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewService(b.Index).VerifyPassword(ctx, "admin", "changed-password-2"); err != nil {
		t.Errorf("update replaced the changed password: %v", err)
	}

	ev.RequestType, ev.PhysicalResourceID = cfn.RequestDelete, id
	if got, _, err := create(ctx, ev); err != nil || got != id {
		t.Errorf("delete: %q %v", got, err)
	}
	if _, err := users.GetUser(ctx, "admin"); err != nil {
		t.Errorf("delete removed the user: %v", err)
	}

	for name, props := range map[string]map[string]any{
		"no property":  {},
		"no secret":    {AdminSecretProperty: arn + "-missing"},
		"not the JSON": {AdminSecretProperty: "plain"},
	} {
		read := secrets(map[string]string{"plain": "just-a-password"})
		if _, _, err := FirstAdministrator(b.Index, read, slog.New(slog.DiscardHandler))(ctx, cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: props}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The auth function answers CloudFormation's event at its ResponseURL and
// API Gateway's events as before.
func TestLambdaAuthAnswersTheCustomResource(t *testing.T) {
	answers := make(chan map[string]any, 1)
	cfnServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var answer map[string]any
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &answer)
		answers <- answer
	}))
	defer cfnServer.Close()
	env := map[string]string{"TUNINGBOX_BACKEND": BackendEmbedded, "TUNINGBOX_DATA": t.TempDir()}
	handle, err := LambdaAuth(context.Background(), func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// No secret reader is reachable here: the resource fails, and says so to CloudFormation.
	ev, _ := json.Marshal(cfn.Event{RequestType: cfn.RequestCreate, RequestID: "r1", ResponseURL: cfnServer.URL + "/response?" + url.Values{"sig": {"x"}}.Encode(),
		StackID: "stack", LogicalResourceID: "FirstAdministrator", ResourceProperties: map[string]any{AdminSecretProperty: ""}})
	if _, err := handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-answers:
		if a["Status"] != "FAILED" || a["LogicalResourceId"] != "FirstAdministrator" {
			t.Errorf("answer %v", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer at the ResponseURL")
	}
	out, err := handle(context.Background(), json.RawMessage(`{"version":"2.0","rawPath":"/api/v1/users","requestContext":{"http":{"method":"GET","path":"/api/v1/users"}}}`))
	if raw, _ := json.Marshal(out); err != nil || !strings.Contains(string(raw), `"statusCode":401`) {
		t.Errorf("unauthenticated API event: %s %v", raw, err)
	}
}

// The Keystone password comes from its secret, and a secret that cannot be read fails the start.
func TestResolveSecrets(t *testing.T) {
	cfg := Config{KeystonePasswordSecret: "arn:keystone"}
	if err := resolveSecrets(context.Background(), &cfg, secrets(map[string]string{"arn:keystone": "service-password"})); err != nil || cfg.Keystone.Password != "service-password" {
		t.Errorf("password %q, %v", cfg.Keystone.Password, err)
	}
	cfg = Config{KeystonePasswordSecret: "arn:other"}
	if err := resolveSecrets(context.Background(), &cfg, secrets(nil)); err == nil {
		t.Error("an unreadable secret was accepted")
	}
}

// capWait lowers only waits above the cap; TUNINGBOX_MAX_WAIT sets it.
func TestCapWait(t *testing.T) {
	var got string
	h := capWait(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.URL.RawQuery }), 10*time.Second)
	const read = "/api/v1/config/environments/1/resources/astute/values"
	for target, want := range map[string]string{
		read + "?wait=25&key=a":             "wait=10&key=a",
		read + "?key=a&wait=30&wait=1":      "key=a&wait=10",
		read + "?wait=4.5":                  "wait=4.5",
		read + "?wait=soon":                 "wait=soon",
		read + "?key=a":                     "key=a",
		"/api/v1/config/components?wait=25": "wait=25", // a route without ?wait (the router refuses it)
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
		if got != want {
			t.Errorf("%s: the handler saw %s, want %s", target, got, want)
		}
	}
	for env, want := range map[string]time.Duration{"": 0, "10": 10 * time.Second, "2.5": 2500 * time.Millisecond} {
		cfg, err := LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_MAX_WAIT": env}[k] })
		if err != nil || cfg.MaxWait != want {
			t.Errorf("TUNINGBOX_MAX_WAIT=%q: %v %v", env, cfg.MaxWait, err)
		}
	}
	if _, err := LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_MAX_WAIT": "-1"}[k] }); err == nil {
		t.Error("a negative cap was accepted")
	}
}
