package core

import (
	"context"
	"errors"
	"log/slog"
	"testing"

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
