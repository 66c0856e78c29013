// Package authorizer is the API Gateway Lambda REQUEST authorizer
// (functions/authorizer): it reads the authorizer event of either API type,
// has authapi verify the credentials in it (authapi.Middleware.VerifyForAuthorizer)
// and answers with the principal as the authorizer's context, which API Gateway
// caches per credential and hands to every route's function with its event.
//
// Answers: REST API — an Allow policy for the whole API with the principal as
// context, or the error "Unauthorized" (API Gateway's 401). HTTP API (payload
// 2.0, simple responses) — isAuthorized with the principal as context; a
// denial is API Gateway's 403, since simple responses cannot ask for a 401
// (a request without an Authorization header gets 401 from API Gateway itself).
// A throttled login is an error of either (API Gateway's 500), never cached.
package authorizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
)

// Authorizer answers authorizer events with the checks of the middleware every
// route's function runs.
type Authorizer struct {
	guard *authapi.Middleware
}

// New returns the authorizer over guard.
func New(guard *authapi.Middleware) *Authorizer {
	return &Authorizer{guard: guard}
}

// errUnauthorized is the exact error text that makes a REST API answer 401.
var errUnauthorized = errors.New("Unauthorized")

// Invoke handles one authorizer event of either API type.
func (a *Authorizer) Invoke(ctx context.Context, payload json.RawMessage) (any, error) {
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
		return a.AnswerHTTPAPI(ctx, ev)
	}
	var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("decode REST API authorizer event: %w", err)
	}
	return a.AnswerRESTAPI(ctx, ev)
}

// AnswerHTTPAPI answers an HTTP API authorizer event with a simple response.
func (a *Authorizer) AnswerHTTPAPI(ctx context.Context, ev events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	p, err := a.guard.VerifyForAuthorizer(ctx, ev.Headers, ev.RequestContext.Authentication.ClientCert.ClientCertPem, ev.RequestContext.HTTP.SourceIP)
	if refused(err) {
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}, nil
	}
	if err != nil {
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{}, err
	}
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: true, Context: authapi.EncodeAuthorizerContext(p)}, nil
}

// AnswerRESTAPI answers a REST API REQUEST authorizer event with an IAM policy.
func (a *Authorizer) AnswerRESTAPI(ctx context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	p, err := a.guard.VerifyForAuthorizer(ctx, ev.Headers, ev.RequestContext.Identity.ClientCert.ClientCertPem, ev.RequestContext.Identity.SourceIP)
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
		Context: authapi.EncodeAuthorizerContext(p),
	}, nil
}

// refused reports whether an authorizer answers err with "not authorized":
// bad credentials, or a Keystone identity with no tuningbox role. A
// throttled login is not refused but fails (API Gateway's 500): API Gateway
// caches an answer, a denial too, for the Authorization header's TTL, which
// would refuse the right password long after the throttle let it through;
// a failed authorizer is not cached.
func refused(err error) bool {
	return errs.Is(err, errs.Unauthenticated) || errs.Is(err, errs.Forbidden)
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
