package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// The findings of cdk-nag's AwsSolutions pack (TestAwsSolutionsChecks) that
// the stack keeps on purpose, each with its reason, recorded on the
// resources (metadata cdk_nag) where the finding arises.

// suppress records why scope and its children keep the rule's finding;
// appliesTo narrows it to those findings of the rule (IAM5's resources).
func suppress(scope constructs.IConstruct, rule, reason string, appliesTo ...string) {
	s := &cdknag.NagPackSuppression{Id: jsii.String(rule), Reason: jsii.String(reason)}
	if len(appliesTo) > 0 {
		list := make([]any, len(appliesTo))
		for i, a := range appliesTo {
			list[i] = a
		}
		s.AppliesTo = &list
	}
	cdknag.NagSuppressions_AddResourceSuppressions(scope, &[]*cdknag.NagPackSuppression{s}, jsii.Bool(true))
}

// suppressFunctionFindings: the grants a function's role needs that name no single resource.
func suppressFunctionFindings(fn constructs.IConstruct, storage *Storage) {
	suppress(fn, "AwsSolutions-IAM5",
		"X-Ray's PutTraceSegments and PutTelemetryRecords have no resource to name (the CDK grants them for active tracing)",
		"Resource::*")
	bucket := storage.Bucket.Node().DefaultChild().(awscdk.CfnElement)
	suppress(fn, "AwsSolutions-IAM5",
		"blobs/* are the content-addressed blob objects (blobs/<sha256>) of shared/store/awsstore, written and read by hash; nothing else lives under that prefix",
		"Resource::<"+*awscdk.Stack_Of(fn).GetLogicalId(bucket)+".Arn>/"+blobKeys)
}

// suppressAPIFindings: an API that authenticates its own users.
func suppressAPIFindings(api constructs.IConstruct, apiType APIType) {
	suppress(api, "AwsSolutions-COG4",
		"tuningbox authenticates its own users, API tokens, Keystone tokens and client certificates in its Lambda REQUEST authorizer (shared/httpapi/authapi); there is no Cognito user pool")
	suppress(api, "AwsSolutions-APIG4",
		"GET /api/v1/config (the microversions) and GET /api/v1/openapi.json are public by the route table (routes.Public), as on the local server; every other route has the Lambda authorizer")
	if apiType != APIREST {
		return
	}
	suppress(api, "AwsSolutions-APIG2",
		"each function checks every request against the one route table (query parameters, body nesting, microversion) and its handler validates the body; API Gateway holds no model of the API")
	suppress(api, "AwsSolutions-APIG3",
		"no WAF web ACL in the stack: the API is authenticated on every route and throttled per route; an operator who wants one associates it with the stage (the reason to choose the REST variant)")
	suppress(api, "AwsSolutions-IAM4",
		"API Gateway's account-wide CloudWatch role (REST access logs) uses AWS's own AmazonAPIGatewayPushToCloudWatchLogs, which API Gateway documents for it",
		"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs")
}

// suppressStackFindings: the storage, the secret and the dead-letter queue.
func suppressStackFindings(s *Stack) {
	suppress(s.Storage.Bucket, "AwsSolutions-S1",
		"only the stack's function roles reach the bucket (public access blocked, SSL only); server access logs would need a second bucket; enable CloudTrail S3 data events for an audit of object access")
	if secret := s.Node().TryFindChild(jsii.String("AdminSecret")); secret != nil {
		suppress(secret, "AwsSolutions-SMG4",
			"the secret holds the first administrator's initial password, read once at deploy; the user's password lives (bcrypt) in the table and changes through the API, so rotating the secret would change nothing")
	}
	if queue := s.Node().TryFindChild(jsii.String("GCDeadLetters")); queue != nil {
		suppress(queue, "AwsSolutions-SQS3",
			"this queue is the dead-letter queue: the on-failure destination of the sweep's asynchronous invocations")
	}
}
