package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// APIType selects the API Gateway flavour in front of the functions.
type APIType string

const (
	// APIHTTP is an HTTP API (payload format 2.0): cheaper and the default.
	APIHTTP APIType = "http"
	// APIREST is a REST API (payload format 1.0), which LocalStack Community emulates.
	APIREST APIType = "rest"
)

// ParseAPIType reads the apiType context value; empty means HTTP API.
func ParseAPIType(s string) (APIType, error) {
	switch t := APIType(s); t {
	case "":
		return APIHTTP, nil
	case APIHTTP, APIREST:
		return t, nil
	}
	return "", fmt.Errorf("apiType %q: want %q or %q", s, APIHTTP, APIREST)
}

// Route sends every request below the group's paths to its function.
type Route struct {
	Group    EndpointGroup
	Function awslambda.IFunction
}

// authorizerCacheTTL is how long API Gateway reuses an authorizer's answer for
// the same Authorization header.
var authorizerCacheTTL = awscdk.Duration_Minutes(jsii.Number(5))

// NewAPI creates the API of the given type with one proxy route per group
// path and, when authorizer is not nil, that Lambda request authorizer in front
// of every route. It returns the API's base URL.
func NewAPI(scope constructs.Construct, id string, apiType APIType, routes []Route, authorizer awslambda.IFunction) *string {
	if apiType == APIREST {
		return newRESTAPI(scope, id, routes, authorizer)
	}
	return newHTTPAPI(scope, id, routes, authorizer)
}

// The authorizer's answer is cached per Authorization header and serves every
// route: it says who the caller is, and each function checks the caller's role.
// An HTTP API asks it with payload 2.0 and takes a simple {isAuthorized} answer;
// a REST API takes an IAM policy (shared/httpapi/authapi answers both).
func newHTTPAPI(scope constructs.Construct, id string, routes []Route, authorizer awslambda.IFunction) *string {
	var auth awsapigatewayv2.IHttpRouteAuthorizer
	if authorizer != nil {
		auth = awsapigatewayv2authorizers.NewHttpLambdaAuthorizer(jsii.String("Authorizer"), authorizer,
			&awsapigatewayv2authorizers.HttpLambdaAuthorizerProps{
				IdentitySource:  jsii.Strings("$request.header.Authorization"),
				ResponseTypes:   &[]awsapigatewayv2authorizers.HttpLambdaResponseType{awsapigatewayv2authorizers.HttpLambdaResponseType_SIMPLE},
				ResultsCacheTtl: authorizerCacheTTL,
			})
	}
	api := awsapigatewayv2.NewHttpApi(scope, jsii.String(id), &awsapigatewayv2.HttpApiProps{
		Description:       jsii.String("tuningbox API"),
		DefaultAuthorizer: auth,
	})
	for _, r := range routes {
		// One integration and one invoke permission per function, whatever its number of routes.
		integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(r.Group.Name), r.Function,
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{ScopePermissionToRoute: jsii.Bool(false)})
		for _, p := range r.Group.Paths {
			for _, path := range []string{p, p + "/{proxy+}"} {
				api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
					Path:        jsii.String(path),
					Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
					Integration: integration,
				})
			}
		}
		for _, p := range r.Group.PublicGET {
			api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(p),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET},
				Integration: integration,
				Authorizer:  awsapigatewayv2.NewHttpNoneAuthorizer(),
			})
		}
	}
	return api.Url()
}

func newRESTAPI(scope constructs.Construct, id string, routes []Route, authorizer awslambda.IFunction) *string {
	var methods *awsapigateway.MethodOptions
	if authorizer != nil {
		auth := awsapigateway.NewRequestAuthorizer(scope, jsii.String(id+"Authorizer"), &awsapigateway.RequestAuthorizerProps{
			Handler:         authorizer,
			IdentitySources: jsii.Strings(*awsapigateway.IdentitySource_Header(jsii.String("Authorization"))),
			ResultsCacheTtl: authorizerCacheTTL,
		})
		methods = &awsapigateway.MethodOptions{Authorizer: auth, AuthorizationType: awsapigateway.AuthorizationType_CUSTOM}
	}
	api := awsapigateway.NewRestApi(scope, jsii.String(id), &awsapigateway.RestApiProps{
		Description:          jsii.String("tuningbox API"),
		CloudWatchRole:       jsii.Bool(false),
		DefaultMethodOptions: methods,
	})
	for _, r := range routes {
		integration := awsapigateway.NewLambdaIntegration(r.Function,
			&awsapigateway.LambdaIntegrationOptions{ScopePermissionToMethod: jsii.Bool(false)})
		for _, p := range r.Group.Paths {
			resource := api.Root().ResourceForPath(jsii.String(p))
			resource.AddMethod(jsii.String("ANY"), integration, nil)
			resource.AddResource(jsii.String("{proxy+}"), nil).AddMethod(jsii.String("ANY"), integration, nil)
		}
		for _, p := range r.Group.PublicGET {
			api.Root().ResourceForPath(jsii.String(p)).AddMethod(jsii.String("GET"), integration,
				&awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_NONE})
		}
	}
	return api.Url()
}
