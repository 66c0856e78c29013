package authapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// On AWS, API Gateway calls a Lambda REQUEST authorizer (functions/authorizer)
// before the route's function. The authorizer does the expensive part —
// verifying the password or token — and API Gateway caches its answer keyed on
// the Authorization header. Because that cached answer is reused for every
// route, the authorizer decides only who the caller is; the route's function
// runs the same Check, takes the principal from the authorizer's context
// instead of verifying again, and applies the per-route policy.
//
// Answers: REST API — an Allow policy for the whole API with the principal as
// context, or the error "Unauthorized" (API Gateway's 401). HTTP API (payload
// 2.0, simple responses) — isAuthorized with the principal as context; a
// denial is API Gateway's 403, since simple responses cannot ask for a 401
// (a request without an Authorization header gets 401 from API Gateway itself).

// Keys of the authorizer context.
const (
	ctxUser      = "tuningbox_user"
	ctxRole      = "tuningbox_role"
	ctxTokenID   = "tuningbox_token_id"
	ctxNodeNames = "tuningbox_node_names"       // a JSON array, as context values are scalars
	ctxNodeEnv   = "tuningbox_node_environment" // a JSON array
	ctxNodeLevel = "tuningbox_node_levels"      // a JSON object
)

// errUnauthorized is the exact error text that makes a REST API answer 401.
var errUnauthorized = errors.New("Unauthorized")

// AuthorizeEvent handles one authorizer event of either API type.
func (m *Middleware) AuthorizeEvent(ctx context.Context, payload json.RawMessage) (any, error) {
	var probe struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("decode authorizer event: %w", err)
	}
	if probe.Version == "2.0" {
		var ev events.APIGatewayV2CustomAuthorizerV2Request
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("decode HTTP API authorizer event: %w", err)
		}
		return m.AuthorizeHTTPAPI(ctx, ev)
	}
	var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("decode REST API authorizer event: %w", err)
	}
	return m.AuthorizeRESTAPI(ctx, ev)
}

// AuthorizeHTTPAPI answers an HTTP API authorizer with a simple response.
func (m *Middleware) AuthorizeHTTPAPI(ctx context.Context, ev events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	p, err := m.authorizerVerify(ctx, ev.Headers, ev.RequestContext.Authentication.ClientCert.ClientCertPem, ev.RequestContext.HTTP.SourceIP)
	if refused(err) {
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}, nil
	}
	if err != nil {
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{}, err
	}
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: true, Context: principalContext(p)}, nil
}

// AuthorizeRESTAPI answers a REST API REQUEST authorizer with an IAM policy.
func (m *Middleware) AuthorizeRESTAPI(ctx context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	p, err := m.authorizerVerify(ctx, ev.Headers, ev.RequestContext.Identity.ClientCert.ClientCertPem, ev.RequestContext.Identity.SourceIP)
	if refused(err) {
		return events.APIGatewayCustomAuthorizerResponse{}, errUnauthorized
	}
	if err != nil {
		return events.APIGatewayCustomAuthorizerResponse{}, err
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: p.User,
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{
			Version: "2012-10-17",
			Statement: []events.IAMPolicyStatement{{
				Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: []string{wholeAPI(ev.MethodArn)},
			}},
		},
		Context: principalContext(p),
	}, nil
}

// authorizerVerify verifies the Authorization header or, without one, the
// client certificate (PEM) API Gateway's mutual TLS verified against the
// truststore and put into the request context — never anything the client sends as a header.
func (m *Middleware) authorizerVerify(ctx context.Context, headers map[string]string, clientCertPEM, remote string) (auth.Principal, error) {
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

// refused reports whether an authorizer answers err with "not authorized":
// bad credentials, a throttled login (an authorizer cannot answer 429), or a
// Keystone identity with no tuningbox role.
func refused(err error) bool {
	return errs.Is(err, errs.Unauthenticated) || errs.Is(err, errs.TooManyRequests) || errs.Is(err, errs.Forbidden)
}

// wholeAPI turns a method ARN (arn:...:api-id/stage/METHOD/path) into the ARN
// of every method of the stage, since the cached answer serves every route.
func wholeAPI(methodArn string) string {
	parts := strings.SplitN(methodArn, "/", 3)
	if len(parts) < 2 {
		return methodArn
	}
	return parts[0] + "/" + parts[1] + "/*"
}

func principalContext(p auth.Principal) map[string]any {
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
