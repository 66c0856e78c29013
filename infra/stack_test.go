package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/tuningbox/tuningbox/shared/app/keyspace"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// allFunctions is a deployment with every endpoint group and the authorizer.
var allFunctions = Functions{Groups: endpointGroups, Authorizer: true, GC: true}

// synthesized is a stack synthesized in a test, with its template as JSON.
type synthesized struct {
	stack     *Stack
	template  assertions.Template
	resources map[string]resource
	outputs   map[string]any
	tpl       map[string]any // the whole template
}

type resource struct {
	Type       string
	Properties map[string]any
}

// synth builds the stack from placeholder bootstraps in a temp dir (the
// template only records the asset's hash) and synthesizes it offline.
func synth(t *testing.T, apiType APIType, functions Functions) *synthesized {
	t.Helper()
	return synthStack(t, StackProps{API: apiType, Functions: functions})
}

// synthStack is synth with every stack property but BinDir.
func synthStack(t *testing.T, props StackProps) *synthesized {
	t.Helper()
	bin := t.TempDir()
	for _, name := range props.Functions.Names() {
		dir := filepath.Join(bin, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("placeholder for "+name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	var s synthesized
	assert(t, "synthesize", func() {
		props.BinDir = bin
		s.stack = NewStack(app, stackName, &props)
		s.template = assertions.Template_FromStack(s.stack.Stack, nil)
	})
	tpl := *s.template.ToJSON()
	s.tpl = tpl
	s.resources = map[string]resource{}
	for id, v := range tpl["Resources"].(map[string]any) {
		r := v.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		s.resources[id] = resource{Type: r["Type"].(string), Properties: props}
	}
	s.outputs, _ = tpl["Outputs"].(map[string]any)
	return &s
}

// assert runs a CDK assertion, which panics with its report when it fails.
func assert(t *testing.T, what string, check func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	check()
}

func (s *synthesized) countByType() map[string]int {
	counts := map[string]int{}
	for _, r := range s.resources {
		counts[r.Type]++
	}
	return counts
}

// ofType returns the logical ids of the resources of type typ.
func (s *synthesized) ofType(typ string) []string {
	var ids []string
	for id, r := range s.resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// functionIDs maps each function's logical id to its name.
func (s *synthesized) functionIDs(t *testing.T) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for name, fn := range s.stack.Functions {
		cfn, ok := fn.Node().DefaultChild().(awscdk.CfnElement)
		if !ok {
			t.Fatalf("function %s has no CloudFormation resource", name)
		}
		ids[*s.stack.GetLogicalId(cfn)] = name
	}
	return ids
}

// refs collects the logical ids that v refers to with Ref or Fn::GetAtt.
func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if id, ok := v["Ref"].(string); ok {
			out = append(out, id)
		}
		if att, ok := v["Fn::GetAtt"].([]any); ok && len(att) > 0 {
			out = append(out, att[0].(string))
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, refs(v[k])...)
		}
	case []any:
		for _, e := range v {
			out = append(out, refs(e)...)
		}
	}
	return out
}

// functionOf returns the name of the one function that v refers to.
func functionOf(t *testing.T, functions map[string]string, v any) string {
	t.Helper()
	var names []string
	for _, id := range refs(v) {
		if name, ok := functions[id]; ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		t.Fatalf("%v refers to functions %v, want exactly one", v, names)
	}
	return names[0]
}

// wantRoutes lists, for every group path, the route keys "ANY <path>" and
// "ANY <path>/{proxy+}" that reach routes of the table with the group that must serve them.
func wantRoutes(groups []EndpointGroup) map[string]string {
	want := map[string]string{}
	for _, g := range groups {
		for _, p := range g.RoutePaths() {
			want["ANY "+p] = g.Name
		}
		for _, p := range g.PublicGET {
			want["GET "+p] = g.Name
		}
		for _, key := range g.Routes {
			want[key] = g.Name
		}
	}
	return want
}

// isPublicRoute reports whether key ("GET /path") is a public GET route of a group.
func isPublicRoute(key string) bool {
	return slices.ContainsFunc(endpointGroups, func(g EndpointGroup) bool {
		return slices.ContainsFunc(g.PublicGET, func(p string) bool { return key == "GET "+p })
	})
}

func checkCounts(t *testing.T, s *synthesized, want map[string]int) {
	t.Helper()
	got := s.countByType()
	if !maps.Equal(got, want) {
		t.Errorf("resources by type:\n got %v\nwant %v", got, want)
	}
}

func TestHTTPStackResourceCounts(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	checkCounts(t, s, map[string]int{
		"AWS::DynamoDB::Table":           1,
		"AWS::S3::Bucket":                1,
		"AWS::S3::BucketPolicy":          1,
		"AWS::Lambda::Function":          8, // config, watch, graphs, claims, templates, auth, authorizer, gc
		"AWS::Logs::LogGroup":            9, // one per function, the API's access logs
		"AWS::IAM::Role":                 8,
		"AWS::IAM::Policy":               8,
		"AWS::Lambda::Permission":        8, // one per integration, one for the authorizer, one for the gc schedule
		"AWS::Events::Rule":              1, // the hourly gc
		"AWS::ApiGatewayV2::Api":         1,
		"AWS::ApiGatewayV2::Stage":       1,
		"AWS::ApiGatewayV2::Integration": 6,
		"AWS::ApiGatewayV2::Authorizer":  1,
		"AWS::ApiGatewayV2::Route":       27, // the group paths with and without {proxy+} where they reach a route (the watchers' /api/v1/watch/{proxy+} among them), the public GET /api/v1/config, /api/v1/openapi.json and /ui/{proxy+}, the agents' claim
		// Operations (TestOperableInventory).
		"AWS::SecretsManager::Secret":    1, // the first administrator's
		"Custom::FirstAdministrator":     1,
		"AWS::CloudWatch::Alarm":         20, // throttles and p99 duration of 8 functions, 5xx, table throttles, gc errors, dead letters
		"AWS::SNS::Topic":                1,
		"AWS::SNS::TopicPolicy":          1, // SSL only
		"AWS::SNS::Subscription":         1, // the alarm e-mail, when given (a condition)
		"AWS::SQS::Queue":                1, // gc's dead letters
		"AWS::SQS::QueuePolicy":          1, // SSL only
		"AWS::Lambda::EventInvokeConfig": 1, // gc's retries and on-failure destination
	})
	checkInventoryDoc(t, APIHTTP, s)
}

func TestBucketIsVersionedEncryptedPrivateAndSSLOnly(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	assert(t, "bucket", func() {
		s.template.HasResourceProperties(jsii.String("AWS::S3::Bucket"), &map[string]any{
			"VersioningConfiguration": map[string]any{"Status": "Enabled"},
			"BucketEncryption": map[string]any{
				"ServerSideEncryptionConfiguration": []any{
					map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
				},
			},
			"PublicAccessBlockConfiguration": map[string]any{
				"BlockPublicAcls":       true,
				"BlockPublicPolicy":     true,
				"IgnorePublicAcls":      true,
				"RestrictPublicBuckets": true,
			},
		})
	})
	assert(t, "bucket is retained", func() {
		s.template.HasResource(jsii.String("AWS::S3::Bucket"), &map[string]any{
			"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
		})
	})
	assert(t, "bucket policy denies requests without TLS", func() {
		s.template.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), &map[string]any{
			"PolicyDocument": assertions.Match_ObjectLike(&map[string]any{
				"Statement": assertions.Match_ArrayWith(&[]any{
					assertions.Match_ObjectLike(&map[string]any{
						"Effect":    "Deny",
						"Action":    "s3:*",
						"Principal": map[string]any{"AWS": "*"},
						"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
					}),
				}),
			}),
		})
	})
}

func TestTableIsOnDemandWithPITRAndStringKeys(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	assert(t, "table", func() {
		s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), &map[string]any{
			"BillingMode": "PAY_PER_REQUEST",
			"KeySchema": []any{
				map[string]any{"AttributeName": "pk", "KeyType": "HASH"},
				map[string]any{"AttributeName": "sk", "KeyType": "RANGE"},
			},
			"AttributeDefinitions": []any{
				map[string]any{"AttributeName": "pk", "AttributeType": "S"},
				map[string]any{"AttributeName": "sk", "AttributeType": "S"},
			},
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": pointInTimeRecoveryDays},
			"TimeToLiveSpecification":          map[string]any{"AttributeName": "expires_at", "Enabled": true},
			"GlobalSecondaryIndexes":           assertions.Match_Absent(),
			"ProvisionedThroughput":            assertions.Match_Absent(),
		})
	})
	assert(t, "table is retained", func() {
		s.template.HasResource(jsii.String("AWS::DynamoDB::Table"), &map[string]any{
			"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
		})
	})
}

func TestFunctionsRunBootstrapOnARMWithStorageEnv(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	table, bucket := s.ofType("AWS::DynamoDB::Table"), s.ofType("AWS::S3::Bucket")
	functions := s.functionIDs(t)
	if got := slices.Sorted(maps.Values(functions)); !slices.Equal(got, []string{"auth", "authorizer", "claims", "config", "gc", "graphs", "templates", "watch"}) {
		t.Fatalf("functions %v", got)
	}
	for id, name := range functions {
		p := s.resources[id].Properties
		got := fmt.Sprint(p["Runtime"], " ", p["Architectures"], " ", p["Handler"])
		if want := "provided.al2023 [arm64] bootstrap"; got != want {
			t.Errorf("%s: runtime, architectures, handler = %q, want %q", name, got, want)
		}
		env := p["Environment"].(map[string]any)["Variables"].(map[string]any)
		if got := refs(env["TUNINGBOX_TABLE"]); !slices.Equal(got, table) {
			t.Errorf("%s: TUNINGBOX_TABLE refers to %v, want the table %v", name, got, table)
		}
		if got := refs(env["TUNINGBOX_BUCKET"]); !slices.Equal(got, bucket) {
			t.Errorf("%s: TUNINGBOX_BUCKET refers to %v, want the bucket %v", name, got, bucket)
		}
		// The config and watch functions hold ?wait= reads and the claims
		// function (and graphs, for a claim it gets) agents' claims up to
		// 25 s: their timeout stays below API Gateway's 29 s.
		want := float64(defaultTimeout)
		switch name {
		case "config", "watch", "graphs", "claims":
			want = longPollTimeout
		case "gc": // a sweep, not a request (TestGCRunsHourly)
			want = 900
		}
		if p["Timeout"] != want {
			t.Errorf("%s: timeout %v, want %v", name, p["Timeout"], want)
		}
		// The graphs function plans Fuel-scale clusters (graphsMemoryMB); the
		// Go runtime's soft limit is 90 % of every function's memory.
		memory := float64(functionMemoryMB)
		if name == "graphs" {
			memory = graphsMemoryMB
		}
		if p["MemorySize"] != memory || env["GOMEMLIMIT"] != fmt.Sprintf("%dMiB", int(memory)*9/10) || env["GOGC"] != "200" {
			t.Errorf("%s: memory %v, GOMEMLIMIT %v, GOGC %v; want %v MB, 90 %% of it, 200", name, p["MemorySize"], env["GOMEMLIMIT"], env["GOGC"], memory)
		}
	}
}

func TestHTTPRoutesSendEachGroupToItsFunctionBehindTheAuthorizer(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	functions := s.functionIDs(t)
	authorizers := s.ofType("AWS::ApiGatewayV2::Authorizer")
	if len(authorizers) != 1 {
		t.Fatalf("authorizers %v", authorizers)
	}
	auth := s.resources[authorizers[0]].Properties
	if name := functionOf(t, functions, auth["AuthorizerUri"]); name != "authorizer" {
		t.Errorf("the authorizer invokes %s", name)
	}
	gotAuth := fmt.Sprint(auth["AuthorizerType"], " ", auth["IdentitySource"], " ", auth["AuthorizerResultTtlInSeconds"], " ", auth["AuthorizerPayloadFormatVersion"], " ", auth["EnableSimpleResponses"])
	if want := "REQUEST [$request.header.Authorization] 300 2.0 true"; gotAuth != want {
		t.Errorf("authorizer: type, identity, cache TTL, payload, simple = %q, want %q", gotAuth, want)
	}

	got := map[string]string{}
	for _, id := range s.ofType("AWS::ApiGatewayV2::Route") {
		p := s.resources[id].Properties
		integration := refs(p["Target"])
		if len(integration) != 1 {
			t.Fatalf("route %v targets %v", p["RouteKey"], integration)
		}
		got[p["RouteKey"].(string)] = functionOf(t, functions, s.resources[integration[0]].Properties["IntegrationUri"])
		if isPublicRoute(p["RouteKey"].(string)) {
			if p["AuthorizationType"] != "NONE" || p["AuthorizerId"] != nil {
				t.Errorf("public route %v: authorization %v by %v, want NONE", p["RouteKey"], p["AuthorizationType"], p["AuthorizerId"])
			}
		} else if p["AuthorizationType"] != "CUSTOM" || !slices.Equal(refs(p["AuthorizerId"]), authorizers) {
			t.Errorf("route %v: authorization %v by %v, want CUSTOM by %v", p["RouteKey"], p["AuthorizationType"], refs(p["AuthorizerId"]), authorizers)
		}
	}
	if want := wantRoutes(endpointGroups); !maps.Equal(got, want) {
		t.Errorf("routes:\n got %v\nwant %v", got, want)
	}
	for _, id := range s.ofType("AWS::ApiGatewayV2::Integration") {
		p := s.resources[id].Properties
		if p["IntegrationType"] != "AWS_PROXY" || p["PayloadFormatVersion"] != "2.0" {
			t.Errorf("integration %s: type %v, payload %v", id, p["IntegrationType"], p["PayloadFormatVersion"])
		}
	}
	if _, ok := s.outputs["ApiUrl"]; !ok {
		t.Errorf("no ApiUrl output in %v", s.outputs)
	}
}

// statements returns each function's IAM statements, found through its role.
func (s *synthesized) statements(t *testing.T) map[string][]map[string]any {
	t.Helper()
	roleOf := map[string]string{}
	for id, name := range s.functionIDs(t) {
		role := refs(s.resources[id].Properties["Role"])[0]
		roleOf[role] = name
		if managed := s.resources[role].Properties["ManagedPolicyArns"]; managed != nil {
			t.Errorf("%s: the role has managed policies %v", name, managed)
		}
	}
	statements := map[string][]map[string]any{}
	for _, id := range s.ofType("AWS::IAM::Policy") {
		p := s.resources[id].Properties
		for _, role := range refs(p["Roles"]) {
			name, ok := roleOf[role]
			if !ok {
				continue // not a function's role (the REST API's CloudWatch role)
			}
			for _, st := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				statements[name] = append(statements[name], st.(map[string]any))
			}
		}
	}
	return statements
}

// leadingKeys is the condition a grant on prefixes carries.
func leadingKeys(prefixes []string) map[string]any {
	keys := make([]any, len(prefixes))
	for i, p := range prefixes {
		keys[i] = p + "*"
	}
	return map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": keys}}
}

// TestIAMGrantsOnlyTheStoreCalls: each function may make exactly the calls
// of shared/store/awsstore that its access (shared/app/keyspace) allows: table
// reads and writes on its own partition-key prefixes (dynamodb:LeadingKeys),
// blob actions on blobs/* only, plus its X-Ray segments, the auth function
// the admin secret and the collector its dead-letter queue.
func TestIAMGrantsOnlyTheStoreCalls(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	table, bucket := s.ofType("AWS::DynamoDB::Table")[0], s.ofType("AWS::S3::Bucket")[0]
	secret, queue := s.ofType("AWS::SecretsManager::Secret")[0], s.ofType("AWS::SQS::Queue")[0]
	tableRead := []string{"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"}
	tableWrite := []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"}
	blobActions := map[keyspace.BlobAccess][]string{
		keyspace.BlobsNone:      nil,
		keyspace.BlobsRead:      {"s3:GetObject", "s3:ListBucket"},
		keyspace.BlobsReadWrite: {"s3:GetObject", "s3:ListBucket", "s3:PutObject"},
		keyspace.BlobsCollect:   {"s3:GetObject", "s3:ListBucket", "s3:PutObject", "s3:DeleteObject"},
	}
	xray := []string{"xray:PutTelemetryRecords", "xray:PutTraceSegments"}
	logs := []string{"logs:CreateLogStream", "logs:PutLogEvents"}
	extra := map[string][]string{
		"auth": {"secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"},
		"gc":   {"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"},
	}
	statements := s.statements(t)
	// A function that serves another's routes has its grants.
	grants := maps.Clone(keyspace.Functions)
	for _, g := range endpointGroups {
		grants[g.Name] = keyspace.Functions[g.RouteGroup()]
	}
	if len(statements) != len(grants) {
		t.Errorf("statements for %d functions, want %d", len(statements), len(grants))
	}
	for name, access := range grants {
		want := slices.Concat(blobActions[access.Blobs], xray, logs, extra[name])
		if len(access.Read) > 0 {
			want = append(want, tableRead...)
		}
		if len(access.Write) > 0 {
			want = append(want, tableWrite...)
		}
		var actions []string
		for _, st := range statements[name] {
			stActions := asStrings(st["Action"])
			actions = append(actions, stActions...)
			if st["Effect"] != "Allow" {
				t.Errorf("%s: unexpected statement %v", name, st)
			}
			for _, a := range stActions {
				if strings.Contains(a, "*") {
					t.Errorf("%s: wildcard action %q", name, a)
				}
			}
			resources := refs(st["Resource"])
			switch service, _, _ := strings.Cut(stActions[0], ":"); service {
			case "dynamodb":
				prefixes := access.Read
				if slices.Equal(slices.Sorted(slices.Values(stActions)), tableWrite) {
					prefixes = access.Write
				} else if !slices.Equal(slices.Sorted(slices.Values(stActions)), tableRead) {
					t.Errorf("%s: table statement mixes reads and writes: %v", name, stActions)
				}
				if !slices.Equal(resources, []string{table}) || !reflect.DeepEqual(st["Condition"], leadingKeys(prefixes)) {
					t.Errorf("%s: %v on %v if %v, want on the table if %v", name, stActions, resources, st["Condition"], leadingKeys(prefixes))
				}
			case "s3":
				if !slices.Equal(resources, []string{bucket}) {
					t.Errorf("%s: %v on %v", name, stActions, st["Resource"])
				}
				if objects := fmt.Sprint(st["Resource"]); strings.Contains(objects, "/*") && !strings.Contains(objects, "/"+keyspace.BlobKeys+"*") {
					t.Errorf("%s: %v on objects %s, not blobs/*", name, stActions, objects)
				}
			case "logs": // its own log group only (no managed AWSLambdaBasicExecutionRole)
				if len(resources) != 1 || s.resources[resources[0]].Type != "AWS::Logs::LogGroup" || !strings.HasPrefix(resources[0], constructID(name)+"Logs") {
					t.Errorf("%s: %v on %v, want its own log group", name, stActions, st["Resource"])
				}
			case "xray":
				if st["Resource"] != "*" { // X-Ray has no resources to name
					t.Errorf("%s: %v on %v", name, stActions, st["Resource"])
				}
			case "secretsmanager":
				if !slices.Equal(resources, []string{secret}) {
					t.Errorf("%s: %v on %v, want the admin secret", name, stActions, st["Resource"])
				}
			case "sqs":
				if !slices.Equal(resources, []string{queue}) {
					t.Errorf("%s: %v on %v, want the dead-letter queue", name, stActions, st["Resource"])
				}
			default:
				t.Errorf("%s: unexpected statement %v", name, st)
			}
		}
		slices.Sort(actions)
		slices.Sort(want)
		if !slices.Equal(actions, want) {
			t.Errorf("%s: actions\n got %v\nwant %v", name, actions, want)
		}
	}
	t.Logf("grants: %v", grantSummary(statements))
}

// grantSummary lists each function's table conditions, for the test log.
func grantSummary(statements map[string][]map[string]any) map[string][]string {
	out := map[string][]string{}
	for name, sts := range statements {
		for _, st := range sts {
			if c, ok := st["Condition"]; ok {
				out[name] = append(out[name], fmt.Sprint(asStrings(st["Action"])[0], " if ", c))
			}
		}
	}
	return out
}

func asStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = e.(string)
		}
		return out
	}
	return nil
}

func TestRESTVariant(t *testing.T) {
	s := synth(t, APIREST, allFunctions)
	checkCounts(t, s, map[string]int{
		"AWS::DynamoDB::Table":           1,
		"AWS::S3::Bucket":                1,
		"AWS::S3::BucketPolicy":          1,
		"AWS::Lambda::Function":          7, // no claims (below)
		"AWS::Logs::LogGroup":            8,
		"AWS::IAM::Role":                 8, // and API Gateway's CloudWatch role, for the access logs
		"AWS::IAM::Policy":               7,
		"AWS::Lambda::Permission":        7,
		"AWS::Events::Rule":              1,
		"AWS::ApiGateway::Account":       1,
		"AWS::SecretsManager::Secret":    1,
		"Custom::FirstAdministrator":     1,
		"AWS::CloudWatch::Alarm":         18,
		"AWS::SNS::Topic":                1,
		"AWS::SNS::TopicPolicy":          1,
		"AWS::SNS::Subscription":         1,
		"AWS::SQS::Queue":                1,
		"AWS::SQS::QueuePolicy":          1,
		"AWS::Lambda::EventInvokeConfig": 1,
		"AWS::ApiGateway::RestApi":       1,
		"AWS::ApiGateway::Deployment":    1,
		"AWS::ApiGateway::Stage":         1,
		"AWS::ApiGateway::Authorizer":    1,
		"AWS::ApiGateway::Resource":      33, // /api, /api/v1, /ui, the group paths under /api/v1 and their {proxy+}
		"AWS::ApiGateway::Method":        26, // ANY on the paths that reach a route, and the public GET /api/v1/config, /api/v1/openapi.json and /ui/{proxy+}
	})
	checkInventoryDoc(t, APIREST, s)
	functions := s.functionIDs(t)
	authorizers := s.ofType("AWS::ApiGateway::Authorizer")
	auth := s.resources[authorizers[0]].Properties
	if name := functionOf(t, functions, auth["AuthorizerUri"]); name != "authorizer" {
		t.Errorf("the authorizer invokes %s", name)
	}
	gotAuth := fmt.Sprint(auth["Type"], " ", auth["IdentitySource"], " ", auth["AuthorizerResultTtlInSeconds"])
	if want := "REQUEST method.request.header.Authorization 300"; gotAuth != want {
		t.Errorf("authorizer: type, identity, cache TTL = %q, want %q", gotAuth, want)
	}

	got := map[string]string{}
	for _, id := range s.ofType("AWS::ApiGateway::Method") {
		p := s.resources[id].Properties
		key := fmt.Sprint(p["HttpMethod"], " ", s.restPath(t, refs(p["ResourceId"])[0]))
		integration := p["Integration"].(map[string]any)
		if integration["Type"] != "AWS_PROXY" {
			t.Errorf("%s: integration type %v", key, integration["Type"])
		}
		got[key] = functionOf(t, functions, integration["Uri"])
		if isPublicRoute(key) {
			if p["AuthorizationType"] != "NONE" || p["AuthorizerId"] != nil {
				t.Errorf("public %s: authorization %v by %v, want NONE", key, p["AuthorizationType"], p["AuthorizerId"])
			}
		} else if p["AuthorizationType"] != "CUSTOM" || !slices.Equal(refs(p["AuthorizerId"]), authorizers) {
			t.Errorf("%s: authorization %v by %v, want CUSTOM by %v", key, p["AuthorizationType"], refs(p["AuthorizerId"]), authorizers)
		}
	}
	// A REST API resource cannot have {id} beside {proxy+}: no claims function.
	restGroups := slices.DeleteFunc(slices.Clone(endpointGroups), func(g EndpointGroup) bool { return len(g.Routes) > 0 })
	if want := wantRoutes(restGroups); !maps.Equal(got, want) {
		t.Errorf("methods:\n got %v\nwant %v", got, want)
	}
	if _, ok := s.outputs["ApiUrl"]; !ok {
		t.Errorf("no ApiUrl output in %v", s.outputs)
	}
}

// restPath rebuilds the full path of a REST API resource from its parents.
func (s *synthesized) restPath(t *testing.T, id string) string {
	t.Helper()
	r, ok := s.resources[id]
	if !ok || r.Type != "AWS::ApiGateway::Resource" {
		return "" // the API's root resource
	}
	return s.restPath(t, refs(r.Properties["ParentId"])[0]) + "/" + r.Properties["PathPart"].(string)
}

func TestWithoutAuthorizerRoutesAreOpen(t *testing.T) {
	groups := Functions{Groups: endpointGroups[:1]}
	for _, apiType := range []APIType{APIHTTP, APIREST} {
		t.Run(string(apiType), func(t *testing.T) {
			s := synth(t, apiType, groups)
			counts := s.countByType()
			if counts["AWS::Lambda::Function"] != 1 || counts["AWS::ApiGatewayV2::Authorizer"]+counts["AWS::ApiGateway::Authorizer"] != 0 {
				t.Errorf("resources by type: %v", counts)
			}
			routeType := map[APIType]string{APIHTTP: "AWS::ApiGatewayV2::Route", APIREST: "AWS::ApiGateway::Method"}[apiType]
			routes := s.ofType(routeType)
			if len(routes) != 5 {
				t.Errorf("%d routes for the config group, want 5 (ANY /api/v1/config/{proxy+} and /api/v1/store/{proxy+}, three public GETs: /api/v1/config, /api/v1/openapi.json, /ui/{proxy+})", len(routes))
			}
			for _, id := range routes {
				if at := s.resources[id].Properties["AuthorizationType"]; at != "NONE" {
					t.Errorf("%s: authorization type %v", id, at)
				}
			}
		})
	}
}

// TestGCRunsHourly: the garbage collector function is the target of an hourly
// EventBridge rule, with time for a long sweep.
func TestGCRunsHourly(t *testing.T) {
	s := synth(t, APIHTTP, allFunctions)
	var gc string
	for id, name := range s.functionIDs(t) {
		if name == "gc" {
			gc = id
		}
	}
	if gc == "" || s.resources[gc].Properties["Timeout"] != float64(900) {
		t.Fatalf("gc function %q: %v", gc, s.resources[gc].Properties["Timeout"])
	}
	rules := s.ofType("AWS::Events::Rule")
	if len(rules) != 1 {
		t.Fatalf("%d rules", len(rules))
	}
	p := s.resources[rules[0]].Properties
	targets, _ := p["Targets"].([]any)
	if p["ScheduleExpression"] != "rate(1 hour)" || len(targets) != 1 || !slices.Contains(refs(targets[0].(map[string]any)["Arn"]), gc) {
		t.Fatalf("rule %v", p)
	}
	if len(s.ofType("AWS::Lambda::Permission")) == 0 {
		t.Fatal("EventBridge may not invoke the function")
	}
}
