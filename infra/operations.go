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
	// RateLimit and BurstLimit throttle each route of the API on its own
	// (requests per second; API Gateway answers 429 above them): the
	// stage's default route settings, which API Gateway applies per route.
	RateLimit, BurstLimit awscdk.CfnParameter
	// ReservedConcurrency reserves for, and caps, each endpoint group's
	// function and the authorizer; the sweep gets one with it. 0, the
	// default, reserves none: the account's limit may be too low for any.
	ReservedConcurrency awscdk.CfnParameter
	capConcurrency      awscdk.CfnCondition
	// LongPollReservedConcurrency is the pool of the long-poll functions
	// (PoolLongPolls): a waiting agent beyond it is throttled, never a read. Only
	// a stack with such a function has it (longPollPool).
	LongPollReservedConcurrency awscdk.CfnParameter
	capLongPolls                awscdk.CfnCondition
	// WatchReservedConcurrency is the config watchers' pool (PoolWatches):
	// a watch beyond it is throttled, never a Hiera read nor an agent's
	// claim. Only a stack with the watch function has it (watchPool).
	WatchReservedConcurrency awscdk.CfnParameter
	capWatches               awscdk.CfnCondition
	// AlarmEmail, when not empty, subscribes that address to the alarm topic.
	AlarmEmail awscdk.CfnParameter
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
	defaultRateLimit       = 100 // requests per second, steady
	defaultBurstLimit      = 200
	defaultLongPollMaxWait = 10 // seconds
	// maxLongPollWait is the longest wait LongPollMaxWait allows (the
	// API's own cap), and longPollAlarmMargin what a long poll may take
	// beyond its wait before its p99 duration alarms.
	maxLongPollWait     = 25
	longPollAlarmMargin = 1
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
	o.RateLimit = number("ApiRateLimit", "steady requests per second each route of the API accepts before it answers 429 (API Gateway throttles every route on its own)", defaultRateLimit, 1, 10000)
	o.BurstLimit = number("ApiBurstLimit", "requests each route of the API accepts at once above the steady rate", defaultBurstLimit, 1, 5000)
	o.ReservedConcurrency = number("ReservedConcurrency",
		"concurrent executions reserved for, and capping, each endpoint group's function and the authorizer, and one for the sweep (0: none; Lambda keeps 100 of the account's limit unreserved)", 0, 0, 1000)
	o.capConcurrency = nonZero(stack, "CapConcurrency", o.ReservedConcurrency)
	o.Tracing = awscdk.NewCfnParameter(stack, jsii.String("Tracing"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String("Active"), AllowedValues: jsii.Strings("Active", "PassThrough"),
		Description: jsii.String("X-Ray tracing of the functions (and of a REST API's stage): Active, or PassThrough to trace only requests that arrive sampled"),
	})
	o.LongPollMaxWait = number("LongPollMaxWait",
		"longest ?wait= (ConfigDB reads and watches, agents' claims) in seconds: each waiting request holds one billed Lambda execution", defaultLongPollMaxWait, 1, maxLongPollWait)
	o.Alarms = awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("tuningbox alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	o.AlarmEmail = awscdk.NewCfnParameter(stack, jsii.String("AlarmEmail"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String(""), AllowedPattern: jsii.String(`|[^@\s]+@[^@\s]+`),
		Description: jsii.String("e-mail address subscribed to the alarm topic (it must confirm the subscription); empty: none"),
	})
	subscription := awssns.NewCfnSubscription(stack, jsii.String("AlarmEmailSubscription"), &awssns.CfnSubscriptionProps{
		TopicArn: o.Alarms.TopicArn(), Protocol: jsii.String("email"), Endpoint: o.AlarmEmail.ValueAsString(),
	})
	subscription.CfnOptions().SetCondition(awscdk.NewCfnCondition(stack, jsii.String("HasAlarmEmail"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(o.AlarmEmail.ValueAsString(), jsii.String(""))),
	}))
	awscdk.NewCfnOutput(stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Value:       o.Alarms.TopicArn(),
		Description: jsii.String("SNS topic of the stack's alarms: subscribe the operators to it"),
	})
	return o
}

// nonZero is a condition true when the number parameter p is not 0.
func nonZero(stack awscdk.Stack, id string, p awscdk.CfnParameter) awscdk.CfnCondition {
	return awscdk.NewCfnCondition(stack, jsii.String(id), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.ValueAsString(), jsii.String("0"))),
	})
}

// Pool is the concurrency a function reserves.
type Pool int

const (
	// PoolGroups: ReservedConcurrency, when not 0.
	PoolGroups Pool = iota
	// PoolLongPolls: LongPollReservedConcurrency, when not 0.
	PoolLongPolls
	// PoolWatches: WatchReservedConcurrency, when not 0.
	PoolWatches
	// PoolOne: one execution, when ReservedConcurrency is not 0 (the sweep).
	PoolOne
)

// longPollPool adds the parameter LongPollReservedConcurrency once.
func (o *Operations) longPollPool() {
	if o.LongPollReservedConcurrency != nil {
		return
	}
	o.LongPollReservedConcurrency = awscdk.NewCfnParameter(o.stack, jsii.String("LongPollReservedConcurrency"), &awscdk.CfnParameterProps{
		Type: jsii.String("Number"), Default: jsii.Number(0), MinValue: jsii.Number(0), MaxValue: jsii.Number(1000),
		Description: jsii.String("concurrent executions reserved for, and capping, the agents' claims (waiting agents beyond it are throttled, never another route; 0: none)"),
	})
	o.capLongPolls = nonZero(o.stack, "CapLongPolls", o.LongPollReservedConcurrency)
}

// watchPool adds the parameter WatchReservedConcurrency once. Not the
// claims' pool: agents and watchers are different fleets, and 1,000 idle
// agents filling a shared pool would throttle every watch (and the reverse).
func (o *Operations) watchPool() {
	if o.WatchReservedConcurrency != nil {
		return
	}
	o.WatchReservedConcurrency = awscdk.NewCfnParameter(o.stack, jsii.String("WatchReservedConcurrency"), &awscdk.CfnParameterProps{
		Type: jsii.String("Number"), Default: jsii.Number(0), MinValue: jsii.Number(0), MaxValue: jsii.Number(1000),
		Description: jsii.String("concurrent executions reserved for, and capping, the config watchers (GET /api/v1/watch/...; watches beyond it are throttled, never a Hiera read; 0: none)"),
	})
	o.capWatches = nonZero(o.stack, "CapWatches", o.WatchReservedConcurrency)
}

// reservation is the ReservedConcurrentExecutions of a function in pool.
func (o *Operations) reservation(pool Pool) any {
	condition, value := o.capConcurrency, any(o.ReservedConcurrency.ValueAsNumber())
	switch pool {
	case PoolLongPolls:
		o.longPollPool()
		condition, value = o.capLongPolls, o.LongPollReservedConcurrency.ValueAsNumber()
	case PoolWatches:
		o.watchPool()
		condition, value = o.capWatches, o.WatchReservedConcurrency.ValueAsNumber()
	case PoolOne:
		value = 1
	}
	return awscdk.Fn_ConditionIf(condition.LogicalId(), value, awscdk.Aws_NO_VALUE())
}

// tracingOn is true when Tracing is Active, for the REST API stage's setting.
func (o *Operations) tracingOn() awscdk.CfnCondition {
	return awscdk.NewCfnCondition(o.stack, jsii.String("TracingOn"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionEquals(o.Tracing.ValueAsString(), jsii.String("Active")),
	})
}

// configureFunction applies the tracing mode and the concurrency of its pool
// to fn, and alarms on its throttles and its p99 duration: at a share of its
// timeout, or for a long-poll function, whose every idle request lasts its
// wait, past the longest wait LongPollMaxWait allows.
func (o *Operations) configureFunction(name string, fn awslambda.Function, timeoutSeconds float64, longPoll bool, pool Pool) {
	cfn := fn.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.AddPropertyOverride(jsii.String("TracingConfig.Mode"), o.Tracing.ValueAsString())
	cfn.AddPropertyOverride(jsii.String("ReservedConcurrentExecutions"), o.reservation(pool))
	id := constructID(name)
	o.Alarm(fn, id+"Throttles", fn.MetricThrottles(o.metricOptions("Sum")), 1,
		fmt.Sprintf("the %s function was throttled (reserved concurrency or the account's limit)", name))
	threshold := timeoutSeconds * durationAlarmShare
	description := fmt.Sprintf("the %s function's p99 duration is over %.0f%% of its %.0f s timeout", name, durationAlarmShare*100, timeoutSeconds)
	if longPoll {
		threshold = maxLongPollWait + longPollAlarmMargin
		description = fmt.Sprintf("the %s function's p99 duration is over the longest wait plus %d s (%.0f s; its timeout is %.0f s)", name, longPollAlarmMargin, threshold, timeoutSeconds)
	}
	o.Alarm(fn, id+"DurationP99", fn.MetricDuration(o.metricOptions("p99")), threshold*1000, description)
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
