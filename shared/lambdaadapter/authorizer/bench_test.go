package authorizer_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/authorizer"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/lambdatest"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// BenchmarkAuthorizer is the authorizer's latency for an API token and for a
// password (bcrypt at the production cost), cold (a new execution
// environment: nothing cached) and warm (the credential verified before, in
// the same environment). Lambda gives a 256 MB function about 256/1769 of a
// vCPU: run it under a CPU quota of that share to read Lambda's numbers
// (docs/aws.md says how).
func BenchmarkAuthorizer(b *testing.B) {
	backend, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = backend.Close() })
	ctx := context.Background()
	setup := auth.NewService(backend.Index)
	if _, err := setup.CreateUser(ctx, auth.NewUser{Name: "watcher", Password: "watch-password", Role: auth.Observer}); err != nil {
		b.Fatal(err)
	}
	_, token, err := setup.CreateToken(ctx, "watcher", "benchmark")
	if err != nil {
		b.Fatal(err)
	}
	newAuthorizer := func() *authorizer.Authorizer {
		return authorizer.New(authapi.New(auth.NewService(backend.Index), audit.New(backend.Index, nil), nil, slog.New(slog.DiscardHandler)))
	}
	for _, c := range []struct{ name, header string }{
		{"token", "Bearer " + token},
		{"password", lambdatest.BasicHeader("watcher", "watch-password")},
	} {
		ev := events.APIGatewayV2CustomAuthorizerV2Request{
			Version: "2.0", Type: "REQUEST", Headers: map[string]string{"authorization": c.header},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{SourceIP: "198.51.100.7"}},
		}
		answer := func(b *testing.B, a *authorizer.Authorizer) {
			out, err := a.AnswerHTTPAPI(ctx, ev)
			if err != nil || !out.IsAuthorized {
				b.Fatalf("%s: %+v, %v", c.name, out, err)
			}
		}
		b.Run(c.name+"/cold", func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				a := newAuthorizer()
				b.StartTimer()
				answer(b, a)
			}
		})
		b.Run(c.name+"/warm", func(b *testing.B) {
			a := newAuthorizer()
			answer(b, a)
			for b.Loop() {
				answer(b, a)
			}
		})
	}
}
