package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Operations are the stack's operating settings, stack parameters an
// operator may change at deploy, and the topic its alarms notify.
type Operations struct {
	stack awscdk.Stack
	// RateLimit and BurstLimit throttle the whole API (requests per second;
	// API Gateway answers 429 above them).
	RateLimit, BurstLimit awscdk.CfnParameter
	// ReservedConcurrency caps each endpoint group's function and the
	// authorizer (0: no reservation, for accounts whose concurrency limit is
	// too low to reserve any).
	ReservedConcurrency awscdk.CfnParameter
	capConcurrency      awscdk.CfnCondition
	// Tracing is every function's X-Ray mode (Active by default) and turns the
	// REST API stage's tracing on with it.
	Tracing awscdk.CfnParameter
	// LongPollMaxWait caps ?wait= in seconds on Lambda (TUNINGBOX_MAX_WAIT),
	// where a long poll holds one billed execution for its whole wait.
	LongPollMaxWait awscdk.CfnParameter
	// Alarms is the SNS topic every alarm notifies (output AlarmTopicArn).
	Alarms awssns.Topic
}

// Defaults of the operating parameters.
const (
	defaultRateLimit           = 100 // requests per second, steady
	defaultBurstLimit          = 200
	defaultReservedConcurrency = 20
	defaultLongPollMaxWait     = 10 // seconds
	// alarmPeriod is the period of every alarm's metric.
	alarmPeriodMinutes = 5
	// durationAlarmShare: the p99 duration alarm fires at this share of the timeout.
	durationAlarmShare = 0.8
	// accessLogRetention is how long API access logs and function logs are kept.
	accessLogRetention = awslogs.RetentionDays_ONE_MONTH
)

// NewOperations adds the operating parameters and the alarm topic to stack.
func NewOperations(stack awscdk.Stack) *Operations {
	number := func(name, description string, def, minValue, maxValue float64) awscdk.CfnParameter {
		return awscdk.NewCfnParameter(stack, jsii.String(name), &awscdk.CfnParameterProps{
			Type: jsii.String("Number"), Default: jsii.Number(def), MinValue: jsii.Number(minValue), MaxValue: jsii.Number(maxValue),
			Description: jsii.String(description),
		})
	}
	o := &Operations{stack: stack}
	o.RateLimit = number("ApiRateLimit", "steady requests per second the API accepts before it answers 429", defaultRateLimit, 1, 10000)
	o.BurstLimit = number("ApiBurstLimit", "requests the API accepts at once above the steady rate", defaultBurstLimit, 1, 5000)
	o.ReservedConcurrency = number("ReservedConcurrency",
		"concurrent executions reserved for, and capping, each endpoint group's function and the authorizer (0: none)", defaultReservedConcurrency, 0, 1000)
	o.capConcurrency = awscdk.NewCfnCondition(stack, jsii.String("CapConcurrency"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(o.ReservedConcurrency.ValueAsString(), jsii.String("0"))),
	})
	o.Tracing = awscdk.NewCfnParameter(stack, jsii.String("Tracing"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String("Active"), AllowedValues: jsii.Strings("Active", "PassThrough"),
		Description: jsii.String("X-Ray tracing of the functions (and of a REST API's stage): Active, or PassThrough to trace only requests that arrive sampled"),
	})
	o.LongPollMaxWait = number("LongPollMaxWait",
		"longest ?wait= (ConfigDB reads, agents' claims) in seconds: each waiting request holds one billed Lambda execution", defaultLongPollMaxWait, 1, 25)
	o.Alarms = awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{DisplayName: jsii.String("tuningbox alarms")})
	awscdk.NewCfnOutput(stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Value:       o.Alarms.TopicArn(),
		Description: jsii.String("SNS topic of the stack's alarms: subscribe the operators to it"),
	})
	return o
}

// tracingOn is true when Tracing is Active, for the REST API stage's setting.
func (o *Operations) tracingOn() awscdk.CfnCondition {
	return awscdk.NewCfnCondition(o.stack, jsii.String("TracingOn"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionEquals(o.Tracing.ValueAsString(), jsii.String("Active")),
	})
}

// configureFunction applies the tracing mode and the concurrency cap (a
// fixed one when reserved is not nil) to fn, and alarms on its throttles and
// its p99 duration.
func (o *Operations) configureFunction(name string, fn awslambda.Function, timeoutSeconds float64, reserved *float64) {
	cfn := fn.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.AddPropertyOverride(jsii.String("TracingConfig.Mode"), o.Tracing.ValueAsString())
	if reserved != nil {
		cfn.SetReservedConcurrentExecutions(reserved)
	} else {
		cfn.AddPropertyOverride(jsii.String("ReservedConcurrentExecutions"),
			awscdk.Fn_ConditionIf(o.capConcurrency.LogicalId(), o.ReservedConcurrency.ValueAsNumber(), awscdk.Aws_NO_VALUE()))
	}
	id := constructID(name)
	o.Alarm(fn, id+"Throttles", fn.MetricThrottles(o.metricOptions("Sum")), 1,
		fmt.Sprintf("the %s function was throttled (reserved concurrency or the account's limit)", name))
	o.Alarm(fn, id+"DurationP99", fn.MetricDuration(o.metricOptions("p99")), timeoutSeconds*1000*durationAlarmShare,
		fmt.Sprintf("the %s function's p99 duration is over %.0f%% of its %.0f s timeout", name, durationAlarmShare*100, timeoutSeconds))
}

func (o *Operations) metricOptions(statistic string) *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{Statistic: jsii.String(statistic), Period: awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes))}
}

// Alarm alarms when metric reaches threshold in one period, and notifies the topic.
func (o *Operations) Alarm(scope constructs.Construct, id string, metric awscloudwatch.IMetric, threshold float64, description string) awscloudwatch.Alarm {
	alarm := awscloudwatch.NewAlarm(scope, jsii.String(id), &awscloudwatch.AlarmProps{
		Metric:             metric,
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription:   jsii.String(description),
	})
	alarm.AddAlarmAction(awscloudwatchactions.NewSnsAction(o.Alarms))
	return alarm
}

// accessLogFormat is one JSON line per request in the API's access logs
// (the caller's user name comes from the authorizer's answer, never a secret).
func accessLogFormat(api APIType) string {
	fields := []string{
		`"requestId":"$context.requestId"`, `"ip":"$context.identity.sourceIp"`, `"requestTime":"$context.requestTime"`,
		`"httpMethod":"$context.httpMethod"`, `"path":"$context.path"`, `"status":"$context.status"`,
		`"protocol":"$context.protocol"`, `"responseLength":"$context.responseLength"`,
		`"integrationLatency":"$context.integrationLatency"`, `"integrationStatus":"$context.integrationStatus"`,
		`"errorMessage":"$context.error.message"`, `"authorizerError":"$context.authorizer.error"`,
		`"latency":"$context.responseLatency"`, `"user":"$context.authorizer.tuningbox_user"`,
	}
	if api == APIREST {
		fields = append(fields, `"resourcePath":"$context.resourcePath"`)
	} else {
		fields = append(fields, `"routeKey":"$context.routeKey"`)
	}
	return "{" + strings.Join(fields, ",") + "}"
}
