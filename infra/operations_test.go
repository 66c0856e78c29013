package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// param returns a stack parameter of the template.
func (s *synthesized) param(t *testing.T, name string) map[string]any {
	t.Helper()
	p, ok := (*s.template.ToJSON())["Parameters"].(map[string]any)[name].(map[string]any)
	if !ok {
		t.Fatalf("no stack parameter %s", name)
	}
	return p
}

// TestOperableInventory: the operating parameters, the first administrator,
// the functions' tracing, caps and long-poll cap, the alarms and their topic,
// the API's throttling and access logs, the storage's protection and
// lifecycle, and the collector's dead-letter queue (HTTP API).
func TestOperableInventory(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	for name, want := range map[string]string{
		"ApiRateLimit": "Number 100", "ApiBurstLimit": "Number 200", "ReservedConcurrency": "Number 0",
		"LongPollReservedConcurrency": "Number 0", "WatchReservedConcurrency": "Number 0", "LongPollMaxWait": "Number 10", "Tracing": "String Active",
		"AdminUser": "String admin", "AlarmEmail": "String ",
	} {
		p := s.param(t, name)
		if got := fmt.Sprint(p["Type"], " ", p["Default"]); got != want {
			t.Errorf("parameter %s: %s, want %s", name, got, want)
		}
	}
	// API Gateway applies the stage's default route throttle to each route: the parameters say so.
	for _, name := range []string{"ApiRateLimit", "ApiBurstLimit"} {
		if d := fmt.Sprint(s.param(t, name)["Description"]); !strings.Contains(d, "each route") {
			t.Errorf("parameter %s: %q does not say the throttle is per route", name, d)
		}
	}
	if p := s.param(t, "LongPollMaxWait"); p["MaxValue"] != 25.0 || maxLongPollWait != 25 {
		t.Errorf("LongPollMaxWait may exceed the 25 s the API waits: %v", p)
	}
	// The alarm e-mail is subscribed only when given.
	subscriptions := s.ofType("AWS::SNS::Subscription")
	if len(subscriptions) != 1 {
		t.Fatalf("subscriptions %v", subscriptions)
	}
	sub := s.tpl["Resources"].(map[string]any)[subscriptions[0]].(map[string]any)
	if got := fmt.Sprint(sub["Condition"], " ", sub["Properties"]); got != "HasAlarmEmail map[Endpoint:map[Ref:AlarmEmail] Protocol:email TopicArn:map[Ref:"+s.ofType("AWS::SNS::Topic")[0]+"]]" {
		t.Errorf("alarm subscription %s", got)
	}

	// The first administrator: a generated secret, created by the auth function at deploy.
	functions := s.functionIDs(t)
	byName := map[string]string{}
	for id, name := range functions {
		byName[name] = id
	}
	secrets := s.ofType("AWS::SecretsManager::Secret")
	if len(secrets) != 1 {
		t.Fatalf("secrets %v", secrets)
	}
	gen := s.resources[secrets[0]].Properties["GenerateSecretString"].(map[string]any)
	template, _ := json.Marshal(gen["SecretStringTemplate"])
	if gen["GenerateStringKey"] != "password" || gen["PasswordLength"] != 32.0 || !strings.Contains(string(template), `{\"username\":\"`) || !strings.Contains(string(template), `{"Ref":"AdminUser"}`) {
		t.Errorf("admin secret generates %v", gen)
	}
	assert(t, "the admin secret is retained", func() {
		s.template.HasResource(jsii.String("AWS::SecretsManager::Secret"), &map[string]any{"DeletionPolicy": "Retain"})
	})
	custom := s.ofType("Custom::FirstAdministrator")
	if len(custom) != 1 {
		t.Fatalf("custom resources %v", custom)
	}
	cr := s.resources[custom[0]].Properties
	if name := functionOf(t, functions, cr["ServiceToken"]); name != "auth" || !slices.Equal(refs(cr[adminSecretProperty]), secrets) {
		t.Errorf("first administrator: run by %s with %v", name, cr)
	}
	if got := fmt.Sprint(cr["ServiceTimeout"]); got != fmt.Sprint(firstAdministratorTimeoutSeconds) {
		t.Errorf("first administrator: ServiceTimeout %s, want %d s (not CloudFormation's hour)", got, firstAdministratorTimeoutSeconds)
	}
	for output, want := range map[string]string{"AdminSecretArn": secrets[0], "AdminUserName": "AdminUser", "AlarmTopicArn": s.ofType("AWS::SNS::Topic")[0]} {
		o, ok := s.outputs[output].(map[string]any)
		if !ok || !slices.Equal(refs(o["Value"]), []string{want}) {
			t.Errorf("output %s = %v, want a Ref of %s", output, s.outputs[output], want)
		}
	}

	// Functions: traced by the parameter, capped only when the operator
	// reserves concurrency (the collector at one sweep, the claims and the
	// watches each in their own pool), the long-poll groups capped by
	// LongPollMaxWait.
	for id, name := range functions {
		p := s.resources[id].Properties
		if got := fmt.Sprint(p["TracingConfig"]); got != "map[Mode:map[Ref:Tracing]]" {
			t.Errorf("%s: tracing %s", name, got)
		}
		want := "map[Fn::If:[CapConcurrency map[Ref:ReservedConcurrency] map[Ref:AWS::NoValue]]]"
		switch name {
		case "gc":
			want = "map[Fn::If:[CapConcurrency 1 map[Ref:AWS::NoValue]]]"
		case "claims":
			want = "map[Fn::If:[CapLongPolls map[Ref:LongPollReservedConcurrency] map[Ref:AWS::NoValue]]]"
		case "watch":
			want = "map[Fn::If:[CapWatches map[Ref:WatchReservedConcurrency] map[Ref:AWS::NoValue]]]"
		}
		if got := fmt.Sprint(p["ReservedConcurrentExecutions"]); got != want {
			t.Errorf("%s: reserved concurrency %s, want %s", name, got, want)
		}
		env := p["Environment"].(map[string]any)["Variables"].(map[string]any)
		longPoll := name == "config" || name == "watch" || name == "graphs" || name == "claims"
		if got := fmt.Sprint(env["TUNINGBOX_MAX_WAIT"]); longPoll != (got == "map[Ref:LongPollMaxWait]") {
			t.Errorf("%s: TUNINGBOX_MAX_WAIT %s", name, got)
		}
	}

	// Alarms: throttles and p99 duration per function, 5xx, table throttles,
	// failed sweeps and dead letters, every one to the topic.
	topic := s.ofType("AWS::SNS::Topic")
	alarms := map[string]map[string]any{}
	for _, id := range s.ofType("AWS::CloudWatch::Alarm") {
		p := s.resources[id].Properties
		if !slices.Equal(refs(p["AlarmActions"]), topic) {
			t.Errorf("alarm %s notifies %v", id, p["AlarmActions"])
		}
		key := fmt.Sprint(p["Namespace"], " ", p["MetricName"], " ", p["ExtendedStatistic"])
		if p["Metrics"] != nil { // a math expression over metrics: name them by their count
			n := 0
			for _, m := range p["Metrics"].([]any) {
				if stat, ok := m.(map[string]any)["MetricStat"].(map[string]any); ok {
					metric := stat["Metric"].(map[string]any)
					key, n = fmt.Sprint(metric["Namespace"], " ", metric["MetricName"]), n+1
				}
			}
			key = fmt.Sprint(key, " x", n)
		}
		alarms[key+" "+strings.Join(refs(p["Dimensions"]), ",")] = p
	}
	for id, name := range functions {
		timeout := s.resources[id].Properties["Timeout"].(float64)
		if a := alarms["AWS/Lambda Throttles <nil> "+id]; a == nil || a["Threshold"] != 1.0 {
			t.Errorf("%s: throttles alarm %v", name, a)
		}
		// A long poll lasts its wait: its alarm is past the longest one, before the timeout.
		threshold := timeout * 1000 * durationAlarmShare
		if _, longPoll := s.resources[id].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)["TUNINGBOX_MAX_WAIT"]; longPoll {
			threshold = (maxLongPollWait + longPollAlarmMargin) * 1000
			if threshold >= timeout*1000 {
				t.Errorf("%s: p99 threshold %v ms is not below the %v s timeout", name, threshold, timeout)
			}
		}
		if a := alarms["AWS/Lambda Duration p99 "+id]; a == nil || a["Threshold"] != threshold {
			t.Errorf("%s: p99 duration alarm %v (timeout %v s), want at %v ms", name, a, timeout, threshold)
		}
	}
	queue := s.ofType("AWS::SQS::Queue")
	for _, key := range []string{
		"AWS/Lambda Errors <nil> " + byName["gc"],
		"AWS/SQS ApproximateNumberOfMessagesVisible <nil> " + strings.Join(queue, ","),
		"AWS/ApiGateway 5xx <nil> " + s.ofType("AWS::ApiGatewayV2::Api")[0],
		"AWS/DynamoDB ThrottledRequests x6 ", // summed over the six operations the store calls
	} {
		if alarms[key] == nil {
			t.Errorf("no alarm %q among %v", key, slices.Sorted(maps.Keys(alarms)))
		}
	}
	if len(alarms) != 2*len(functions)+4 {
		t.Errorf("%d alarms, want %d", len(alarms), 2*len(functions)+4)
	}

	// The API: throttled by the parameters, JSON access logs kept a month.
	stage := s.resources[s.ofType("AWS::ApiGatewayV2::Stage")[0]].Properties
	if got := fmt.Sprint(stage["DefaultRouteSettings"]); got != "map[ThrottlingBurstLimit:map[Ref:ApiBurstLimit] ThrottlingRateLimit:map[Ref:ApiRateLimit]]" {
		t.Errorf("stage throttling %s", got)
	}
	checkAccessLogs(t, s, stage["AccessLogSettings"].(map[string]any)["DestinationArn"], stage["AccessLogSettings"].(map[string]any)["Format"])

	// Storage: deletion protection, versions and uploads expire.
	table := s.resources[s.ofType("AWS::DynamoDB::Table")[0]].Properties
	if table["DeletionProtectionEnabled"] != true {
		t.Errorf("table deletion protection %v", table["DeletionProtectionEnabled"])
	}
	// A swept blob's bytes outlive the table's recovery window: a restored index finds them.
	recovery := table["PointInTimeRecoverySpecification"].(map[string]any)["RecoveryPeriodInDays"]
	rules := fmt.Sprint(s.resources[s.ofType("AWS::S3::Bucket")[0]].Properties["LifecycleConfiguration"])
	for _, want := range []string{"AbortIncompleteMultipartUpload:map[DaysAfterInitiation:1]", fmt.Sprintf("NoncurrentVersionExpiration:map[NoncurrentDays:%v]", recovery), "Status:Enabled"} {
		if !strings.Contains(rules, want) {
			t.Errorf("bucket lifecycle %s lacks %s", rules, want)
		}
	}

	// The collector: a failed sweep is retried twice, then goes to the queue.
	configs := s.ofType("AWS::Lambda::EventInvokeConfig")
	if len(configs) != 1 {
		t.Fatalf("event invoke configs %v", configs)
	}
	c := s.resources[configs[0]].Properties
	if c["FunctionName"].(map[string]any)["Ref"] != byName["gc"] || c["MaximumRetryAttempts"] != float64(gcRetries) ||
		!slices.Equal(refs(c["DestinationConfig"]), queue) {
		t.Errorf("gc's on-failure destination: %v", c)
	}
	if q := s.resources[queue[0]].Properties; q["SqsManagedSseEnabled"] != true {
		t.Errorf("dead-letter queue %v", q)
	}
}

// checkAccessLogs: the access log format is one JSON object with the
// request id and status, written to a log group kept a month.
func checkAccessLogs(t *testing.T, s *synthesized, destination, format any) {
	t.Helper()
	var fields map[string]string
	if err := json.Unmarshal([]byte(fmt.Sprint(format)), &fields); err != nil || fields["requestId"] != "$context.requestId" || fields["status"] != "$context.status" {
		t.Errorf("access log format %v: %v", format, err)
	}
	groups := refs(destination)
	if len(groups) != 1 || s.resources[groups[0]].Type != "AWS::Logs::LogGroup" || s.resources[groups[0]].Properties["RetentionInDays"] != 30.0 {
		t.Errorf("access logs go to %v", destination)
	}
}

// TestOperableREST: the REST API stage's throttling, tracing and access logs.
func TestOperableREST(t *testing.T) {
	s := synth(t, APIREST, allFunctions)
	stage := s.resources[s.ofType("AWS::ApiGateway::Stage")[0]].Properties
	if got := fmt.Sprint(stage["TracingEnabled"]); got != "map[Fn::If:[TracingOn true false]]" {
		t.Errorf("stage tracing %s", got)
	}
	if got := fmt.Sprint(stage["MethodSettings"]); !strings.Contains(got, "ThrottlingBurstLimit:map[Ref:ApiBurstLimit]") || !strings.Contains(got, "ThrottlingRateLimit:map[Ref:ApiRateLimit]") {
		t.Errorf("stage throttling %s", got)
	}
	logs := stage["AccessLogSetting"].(map[string]any)
	checkAccessLogs(t, s, logs["DestinationArn"], logs["Format"])
	if len(s.ofType("AWS::ApiGateway::Account")) != 1 {
		t.Error("no API Gateway account setting: a REST API's access logs need its CloudWatch role")
	}
	// The 5xx alarm's ApiName is the stack's: two stacks' alarms never watch each other's API.
	api := s.resources[s.ofType("AWS::ApiGateway::RestApi")[0]].Properties
	if got := fmt.Sprint(api["Name"]); got != "map[Ref:AWS::StackName]" {
		t.Errorf("REST API name %s, want the stack's", got)
	}
	found := false
	for _, id := range s.ofType("AWS::CloudWatch::Alarm") {
		p := s.resources[id].Properties
		if p["MetricName"] == "5XXError" {
			found = true
			if got := fmt.Sprint(p["Dimensions"]); got != "[map[Name:ApiName Value:map[Ref:AWS::StackName]]]" {
				t.Errorf("5xx alarm dimensions %s", got)
			}
		}
	}
	if !found {
		t.Error("no 5XXError alarm")
	}
}
