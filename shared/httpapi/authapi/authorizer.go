package authapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// On AWS, API Gateway calls a request authorizer (shared/lambdaadapter/authorizer)
// before the route's function. The authorizer does the expensive part —
// verifying the password or token, with VerifyForAuthorizer — and API Gateway
// caches its answer, the principal as EncodeAuthorizerContext writes it, keyed
// on the Authorization header. Because that cached answer is reused for every
// route, the authorizer decides only who the caller is; the route's function
// runs the same Check, takes the principal from the authorizer's context
// (httpapi.AuthorizerContext) instead of verifying again, and applies the
// per-route policy.

// Keys of the authorizer context.
const (
	ctxUser      = "tuningbox_user"
	ctxRole      = "tuningbox_role"
	ctxTokenID   = "tuningbox_token_id"
	ctxNodeNames = "tuningbox_node_names"       // a JSON array, as context values are scalars
	ctxNodeEnv   = "tuningbox_node_environment" // a JSON array
	ctxNodeLevel = "tuningbox_node_levels"      // a JSON object
)

// VerifyForAuthorizer verifies what an authorizer is given: the request's
// headers (Authorization, else X-Auth-Token) or, without them, the client
// certificate (PEM) API Gateway's mutual TLS verified against the truststore
// and put into the request context — never anything the client sends as a
// header. remote is the client's address, for the failed-login throttle and logs.
func (m *Middleware) VerifyForAuthorizer(ctx context.Context, headers map[string]string, clientCertPEM, remote string) (auth.Principal, error) {
	var header, keystoneToken string
	for k, v := range headers {
		switch {
		case strings.EqualFold(k, "Authorization"):
			header = v
		case strings.EqualFold(k, KeystoneHeader):
			keystoneToken = v
		}
	}
	if header == "" && keystoneToken != "" {
		return m.verifyKeystone(ctx, keystoneToken, remote)
	}
	if header == "" && clientCertPEM != "" {
		cert, err := clientcert.ParsePEM(clientCertPEM)
		if err != nil {
			return auth.Principal{}, fmt.Errorf("client certificate from API Gateway: %w", err)
		}
		return m.verifyCertificate(ctx, cert, remote)
	}
	if header == "" {
		return auth.Principal{}, errs.New(errs.Unauthenticated, "authentication required")
	}
	p, cred, err := m.verify(ctx, header, remote)
	if errs.Is(err, errs.Unauthenticated) {
		m.logFailure(ctx, remote, cred, err)
	}
	return p, err
}

// EncodeAuthorizerContext writes p as an authorizer's context, whose values
// API Gateway allows to be scalars only; authorizerPrincipal reads it back.
func EncodeAuthorizerContext(p auth.Principal) map[string]any {
	c := map[string]any{ctxUser: p.User, ctxRole: string(p.Role)}
	if p.TokenID != "" {
		c[ctxTokenID] = p.TokenID
	}
	// Slices and maps of strings always encode.
	if len(p.NodeNames) > 0 {
		names, _ := json.Marshal(p.NodeNames)
		c[ctxNodeNames] = string(names)
	}
	if len(p.NodeEnvironment) > 0 {
		env, _ := json.Marshal(p.NodeEnvironment)
		c[ctxNodeEnv] = string(env)
	}
	if len(p.NodeLevels) > 0 {
		levels, _ := json.Marshal(p.NodeLevels)
		c[ctxNodeLevel] = string(levels)
	}
	return c
}

// authorizerPrincipal reads the principal an API Gateway authorizer answered
// (put on the request context by the Lambda adapter from the event, never from
// anything a client sends).
func authorizerPrincipal(ctx context.Context) (auth.Principal, bool) {
	c, _ := httpapi.AuthorizerContext(ctx)
	user, _ := c[ctxUser].(string)
	role, _ := c[ctxRole].(string)
	if user == "" || !auth.Role(role).Valid() {
		return auth.Principal{}, false
	}
	p := auth.Principal{User: user, Role: auth.Role(role)}
	p.TokenID, _ = c[ctxTokenID].(string)
	for key, dst := range map[string]any{ctxNodeNames: &p.NodeNames, ctxNodeEnv: &p.NodeEnvironment, ctxNodeLevel: &p.NodeLevels} {
		if v, ok := c[key].(string); ok {
			if err := json.Unmarshal([]byte(v), dst); err != nil {
				return auth.Principal{}, false
			}
		}
	}
	return p, true
}
