package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// APIType selects the API Gateway flavour in front of the functions.
type APIType string

const (
	// APIHTTP is an HTTP API (payload format 2.0): cheaper and the default.
	APIHTTP APIType = "http"
	// APIREST is a REST API (payload format 1.0): what an operator needs for a
	// WAF web ACL or a private endpoint; make integration runs it on moto.
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
// of every route; ids may serve it on a custom domain with mutual TLS. Its
// stage is throttled by the stack parameters of ops and writes JSON access
// logs. It returns the API's base URL and its 5xx metric.
func NewAPI(scope constructs.Construct, id string, apiType APIType, routes []Route, authorizer awslambda.IFunction, ids Identities, ops *Operations) (*string, awscloudwatch.IMetric) {
	accessLogs := awslogs.NewLogGroup(scope, jsii.String(id+"AccessLogs"), &awslogs.LogGroupProps{Retention: accessLogRetention})
	if apiType == APIREST {
		return newRESTAPI(scope, id, routes, authorizer, ids, ops, accessLogs)
	}
	return newHTTPAPI(scope, id, routes, authorizer, ids, ops, accessLogs)
}

// authorizerCache returns the identity source and cache time of the
// authorizer: the Authorization header for 5 minutes, or, when callers may
// come without that header (see Identities.headerless), no cache and the
// caller's address, a source every request has.
func authorizerCache(ids Identities, authorizationHeader, sourceIP string) (*[]*string, awscdk.Duration) {
	if ids.headerless() {
		return jsii.Strings(sourceIP), awscdk.Duration_Seconds(jsii.Number(0))
	}
	return jsii.Strings(authorizationHeader), authorizerCacheTTL
}

// mtlsURL is the base URL on the custom domain; the domain's DNS target is an output.
func mtlsURL(scope constructs.Construct, m MTLS, target *string) *string {
	awscdk.NewCfnOutput(scope, jsii.String("MtlsDomainTarget"), &awscdk.CfnOutputProps{
		Value:       target,
		Description: jsii.String("CNAME (or alias) target for " + m.Domain),
	})
	return jsii.String("https://" + m.Domain + "/")
}

// The authorizer's answer is cached per Authorization header and serves every
// route: it says who the caller is, and each function checks the caller's role.
// An HTTP API asks it with payload 2.0 and takes a simple {isAuthorized} answer;
// a REST API takes an IAM policy (shared/httpapi/authapi answers both).
func newHTTPAPI(scope constructs.Construct, id string, routes []Route, authorizer awslambda.IFunction, ids Identities, ops *Operations, accessLogs awslogs.LogGroup) (*string, awscloudwatch.IMetric) {
	var auth awsapigatewayv2.IHttpRouteAuthorizer
	if authorizer != nil {
		sources, ttl := authorizerCache(ids, "$request.header.Authorization", "$context.identity.sourceIp")
		auth = awsapigatewayv2authorizers.NewHttpLambdaAuthorizer(jsii.String("Authorizer"), authorizer,
			&awsapigatewayv2authorizers.HttpLambdaAuthorizerProps{
				IdentitySource:  sources,
				ResponseTypes:   &[]awsapigatewayv2authorizers.HttpLambdaResponseType{awsapigatewayv2authorizers.HttpLambdaResponseType_SIMPLE},
				ResultsCacheTtl: ttl,
			})
	}
	props := &awsapigatewayv2.HttpApiProps{
		Description:       jsii.String("tuningbox API"),
		DefaultAuthorizer: auth,
	}
	var domain awsapigatewayv2.DomainName
	if m := ids.MTLS; m.Enabled() {
		domain = awsapigatewayv2.NewDomainName(scope, jsii.String(id+"Domain"), &awsapigatewayv2.DomainNameProps{
			DomainName:  jsii.String(m.Domain),
			Certificate: m.certificate(scope),
			Mtls:        &awsapigatewayv2.MTLSConfig{Bucket: m.bucket(scope), Key: jsii.String(m.TruststoreKey), Version: m.version()},
		})
		props.DefaultDomainMapping = &awsapigatewayv2.DomainMappingOptions{DomainName: domain}
		props.DisableExecuteApiEndpoint = jsii.Bool(true)
	}
	api := awsapigatewayv2.NewHttpApi(scope, jsii.String(id), props)
	// An HTTP API has no X-Ray tracing of its own: traces start at the functions.
	stage := api.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(), Format: jsii.String(accessLogFormat(APIHTTP)),
	})
	stage.SetDefaultRouteSettings(&awsapigatewayv2.CfnStage_RouteSettingsProperty{
		ThrottlingRateLimit: ops.RateLimit.ValueAsNumber(), ThrottlingBurstLimit: ops.BurstLimit.ValueAsNumber(),
	})
	serverErrors := api.MetricServerError(ops.metricOptions("Sum"))
	for _, r := range routes {
		// One integration and one invoke permission per function, whatever its number of routes.
		integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(r.Group.Name), r.Function,
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{ScopePermissionToRoute: jsii.Bool(false)})
		for _, path := range r.Group.RoutePaths() {
			api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(path),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
				Integration: integration,
			})
		}
		for _, p := range r.Group.PublicGET {
			api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(p),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET},
				Integration: integration,
				Authorizer:  awsapigatewayv2.NewHttpNoneAuthorizer(),
			})
		}
		for _, key := range r.Group.Routes {
			method, path, _ := strings.Cut(key, " ")
			api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(path),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(method)},
				Integration: integration,
			})
		}
	}
	suppressAPIFindings(api, APIHTTP) // after the routes: it applies to the API's children as they are then
	if domain != nil {
		return mtlsURL(scope, ids.MTLS, domain.RegionalDomainName()), serverErrors
	}
	return api.Url(), serverErrors
}

func newRESTAPI(scope constructs.Construct, id string, routes []Route, authorizer awslambda.IFunction, ids Identities, ops *Operations, accessLogs awslogs.LogGroup) (*string, awscloudwatch.IMetric) {
	var methods *awsapigateway.MethodOptions
	if authorizer != nil {
		sources, ttl := authorizerCache(ids, *awsapigateway.IdentitySource_Header(jsii.String("Authorization")),
			*awsapigateway.IdentitySource_Context(jsii.String("identity.sourceIp")))
		auth := awsapigateway.NewRequestAuthorizer(scope, jsii.String(id+"Authorizer"), &awsapigateway.RequestAuthorizerProps{
			Handler:         authorizer,
			IdentitySources: sources,
			ResultsCacheTtl: ttl,
		})
		methods = &awsapigateway.MethodOptions{Authorizer: auth, AuthorizationType: awsapigateway.AuthorizationType_CUSTOM}
	}
	props := &awsapigateway.RestApiProps{
		Description: jsii.String("tuningbox API"),
		// The 5xx alarm's dimension (ApiName): the stack's name, unique in
		// the account and region, not the construct id every stack shares.
		RestApiName: awscdk.Aws_STACK_NAME(),
		// A REST API writes access logs through the account's API Gateway
		// CloudWatch role (AWS::ApiGateway::Account), which this creates.
		CloudWatchRole:       jsii.Bool(true),
		DefaultMethodOptions: methods,
		DeployOptions: &awsapigateway.StageOptions{
			ThrottlingRateLimit:  ops.RateLimit.ValueAsNumber(),
			ThrottlingBurstLimit: ops.BurstLimit.ValueAsNumber(),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(accessLogs),
			AccessLogFormat:      awsapigateway.AccessLogFormat_Custom(jsii.String(accessLogFormat(APIREST))),
			// Execution logs of failures only (integration and authorizer
			// errors): the access logs have every request.
			LoggingLevel:   awsapigateway.MethodLoggingLevel_ERROR,
			TracingEnabled: jsii.Bool(true),
		},
		// Gzip-encoded answers (isBase64Encoded) reach clients as bytes, not base64 text.
		BinaryMediaTypes: jsii.Strings("*/*"),
	}
	if m := ids.MTLS; m.Enabled() {
		props.DomainName = &awsapigateway.DomainNameOptions{
			DomainName:   jsii.String(m.Domain),
			Certificate:  m.certificate(scope),
			EndpointType: awsapigateway.EndpointType_REGIONAL,
			Mtls:         &awsapigateway.MTLSConfig{Bucket: m.bucket(scope), Key: jsii.String(m.TruststoreKey), Version: m.version()},
		}
		props.DisableExecuteApiEndpoint = jsii.Bool(true)
	}
	api := awsapigateway.NewRestApi(scope, jsii.String(id), props)
	// The stage traces with the functions (stack parameter Tracing).
	api.DeploymentStage().Node().DefaultChild().(awsapigateway.CfnStage).AddPropertyOverride(jsii.String("TracingEnabled"),
		awscdk.Fn_ConditionIf(ops.tracingOn().LogicalId(), true, false))
	serverErrors := api.MetricServerError(ops.metricOptions("Sum"))
	for _, r := range routes {
		integration := awsapigateway.NewLambdaIntegration(r.Function,
			&awsapigateway.LambdaIntegrationOptions{ScopePermissionToMethod: jsii.Bool(false)})
		for _, path := range r.Group.RoutePaths() {
			api.Root().ResourceForPath(jsii.String(path)).AddMethod(jsii.String("ANY"), integration, nil)
		}
		for _, p := range r.Group.PublicGET {
			api.Root().ResourceForPath(jsii.String(p)).AddMethod(jsii.String("GET"), integration,
				&awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_NONE})
		}
	}
	suppressAPIFindings(api, APIREST) // after the methods: it applies to the API's children as they are then
	if ids.MTLS.Enabled() {
		return mtlsURL(scope, ids.MTLS, api.DomainName().DomainNameAliasDomainName()), serverErrors
	}
	return api.Url(), serverErrors
}
