package main

import (
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/tuningbox/tuningbox/shared/app/keyspace"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// StackProps configures the tuningbox stack.
type StackProps struct {
	awscdk.StackProps
	API       APIType
	Functions Functions
	// BinDir holds <name>/bootstrap for every function (make build writes bin/).
	BinDir string
	// Identities adds Keystone tokens and mutual TLS (context values, see Identities).
	Identities Identities
}

// Stack is one tuningbox deployment: storage, a function per endpoint group,
// the optional request authorizer and the API in front of them, the first
// administrator, and the alarms.
type Stack struct {
	awscdk.Stack
	Storage    *Storage
	Operations *Operations
	// Functions by name (the group name, or "authorizer").
	Functions map[string]awslambda.Function
}

// adminSecretProperty is the custom resource's property naming the admin
// secret: shared/app.AdminSecretProperty, which the auth function reads.
const adminSecretProperty = "AdminSecret"

// firstAdministratorTimeoutSeconds is how long CloudFormation waits for the
// first administrator's answer: a few of the auth function's invocations
// (defaultTimeout), with Lambda's retries of a failed one.
const firstAdministratorTimeoutSeconds = 120

// NewStack builds the stack and outputs the API's URL as ApiUrl.
func NewStack(scope constructs.Construct, id string, props *StackProps) *Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	s := &Stack{Stack: stack, Storage: NewStorage(stack, "Storage"), Operations: NewOperations(stack), Functions: map[string]awslambda.Function{}}

	newFunction := func(g EndpointGroup) awslambda.Function {
		fn := NewFunction(stack, constructID(g.Name), FunctionProps{
			Name:       g.Name,
			CodeDir:    filepath.Join(props.BinDir, g.Name),
			Storage:    s.Storage,
			Access:     keyspace.Functions[g.RouteGroup()],
			LongPoll:   g.LongPoll,
			MemoryMB:   g.MemoryMB,
			Pool:       g.Pool,
			Operations: s.Operations,
		})
		s.Functions[g.Name] = fn
		return fn
	}
	apiRoutes := make([]Route, 0, len(props.Functions.Groups))
	for _, g := range props.Functions.Groups {
		if len(g.Routes) > 0 && props.API == APIREST {
			// A REST API resource cannot have both {id} and {proxy+}
			// children: its claims stay with the graphs function. (The
			// watchers' function has a prefix of its own: it stays.)
			continue
		}
		apiRoutes = append(apiRoutes, Route{Group: g, Function: newFunction(g)})
	}
	var authorizer awslambda.IFunction
	if props.Functions.Authorizer {
		fn := newFunction(EndpointGroup{Name: authorizerName})
		props.Identities.configureAuthorizer(stack, fn)
		authorizer = fn
	}
	if auth, ok := s.Functions[routes.GroupAuth]; ok {
		s.firstAdministrator(auth)
	}
	if props.Functions.GC {
		s.collector(props.BinDir)
	}

	url, serverErrors := NewAPI(stack, "Api", props.API, apiRoutes, authorizer, props.Identities, s.Operations)
	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       url,
		Description: jsii.String("Base URL of the tuningbox API"),
	})
	s.Operations.Alarm(stack, "Api5xx", serverErrors, 1, "the API answered 5xx (a function failed, timed out or was throttled)")
	s.Operations.Alarm(stack, "TableThrottles", s.Storage.Table.MetricThrottledRequestsForOperations(&awsdynamodb.OperationsMetricOptions{
		Operations: &[]awsdynamodb.Operation{
			awsdynamodb.Operation_GET_ITEM, awsdynamodb.Operation_BATCH_GET_ITEM, awsdynamodb.Operation_QUERY,
			awsdynamodb.Operation_UPDATE_ITEM, awsdynamodb.Operation_DELETE_ITEM, awsdynamodb.Operation_TRANSACT_WRITE_ITEMS,
		},
		Period: awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes)),
	}), 1, "DynamoDB throttled requests to the table")
	suppressStackFindings(s)
	return s
}

// firstAdministrator generates the first administrator's password in Secrets
// Manager and has the auth function create that user at deploy (the custom
// resource Custom::FirstAdministrator, shared/app.FirstAdministrator); the
// outputs name the secret and the user.
func (s *Stack) firstAdministrator(auth awslambda.Function) {
	user := awscdk.NewCfnParameter(s.Stack, jsii.String("AdminUser"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String("admin"), AllowedPattern: jsii.String("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}"),
		Description: jsii.String("name of the first administrator, created at the first deploy with the password generated in the secret AdminSecretArn"),
	})
	secret := awssecretsmanager.NewSecret(s.Stack, jsii.String("AdminSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("tuningbox: the first administrator's name and generated password"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			SecretStringTemplate: awscdk.Fn_Join(jsii.String(""), jsii.Strings(`{"username":"`, *user.ValueAsString(), `"}`)),
			GenerateStringKey:    jsii.String("password"),
			PasswordLength:       jsii.Number(32),
			ExcludePunctuation:   jsii.Bool(true),
		},
		// Kept with the table, where the user lives.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	secret.GrantRead(auth, nil)
	awscdk.NewCustomResource(s.Stack, jsii.String("FirstAdministrator"), &awscdk.CustomResourceProps{
		ServiceToken: auth.FunctionArn(),
		ResourceType: jsii.String("Custom::FirstAdministrator"),
		Properties:   &map[string]any{adminSecretProperty: secret.SecretArn()},
		// The function answers even when it cannot start (shared/lambdamain);
		// should no answer come all the same, CloudFormation gives up after
		// this instead of an hour.
		ServiceTimeout: awscdk.Duration_Seconds(jsii.Number(firstAdministratorTimeoutSeconds)),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("AdminSecretArn"), &awscdk.CfnOutputProps{
		Value:       secret.SecretArn(),
		Description: jsii.String("Secrets Manager secret with the first administrator's username and password"),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("AdminUserName"), &awscdk.CfnOutputProps{
		Value:       user.ValueAsString(),
		Description: jsii.String("the first administrator"),
	})
}

// gcRetries is how often Lambda retries a failed hourly sweep before it goes
// to the dead-letter queue.
const gcRetries = 2

// collector is the blob garbage collector: one sweep an hour
// (store.CollectGarbage), one at a time, a failed sweep retried and then
// sent to a dead-letter queue, both alarmed on.
func (s *Stack) collector(binDir string) {
	deadLetters := awssqs.NewQueue(s.Stack, jsii.String("GCDeadLetters"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		EnforceSSL:      jsii.Bool(true),
	})
	fn := NewFunction(s.Stack, constructID(gcName), FunctionProps{
		Name:           gcName,
		CodeDir:        filepath.Join(binDir, gcName),
		Storage:        s.Storage,
		Access:         keyspace.Functions[gcName],
		TimeoutSeconds: 900,
		Operations:     s.Operations,
		Pool:           PoolOne,
	})
	fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		OnFailure:     awslambdadestinations.NewSqsDestination(deadLetters),
		RetryAttempts: jsii.Number(gcRetries),
	})
	s.Functions[gcName] = fn
	awsevents.NewRule(s.Stack, jsii.String("GCSchedule"), &awsevents.RuleProps{
		Schedule: awsevents.Schedule_Rate(awscdk.Duration_Hours(jsii.Number(1))),
		Targets:  &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, nil)},
	})
	s.Operations.Alarm(fn, "GCErrors", fn.MetricErrors(s.Operations.metricOptions("Sum")), 1, "a blob garbage collection sweep failed")
	s.Operations.Alarm(deadLetters, "GCDeadLettersVisible", deadLetters.MetricApproximateNumberOfMessagesVisible(
		&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes))}),
		1, "a blob garbage collection sweep failed after its retries (its event is in the dead-letter queue)")
}

// constructID turns a function name into a construct id ("config" -> "Config").
func constructID(name string) string {
	return strings.ToUpper(name[:1]) + name[1:]
}
