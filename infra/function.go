package main

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/tuningbox/tuningbox/shared/app/keyspace"
)

// The grants below are exactly the calls shared/store/awsstore makes; a
// TransactWriteItems call is authorized by the actions of its items.
var (
	tableReadActions  = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
	tableWriteActions = []string{"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	// blobKeys are the object keys awsstore uses (blobs/<hex sha256>).
	blobKeys = keyspace.BlobKeys + "*"
)

// FunctionProps configures one tuningbox Lambda function.
type FunctionProps struct {
	// Name is the function's directory under functions/ and its entry in keyspace.Functions.
	Name string
	// CodeDir holds the function's bootstrap binary (bin/<name> after make build).
	CodeDir string
	Storage *Storage
	// Access is what the function may touch: its grants.
	Access keyspace.Access
	// LongPoll raises the timeout from defaultTimeout to longPollTimeout and
	// caps ?wait= at the stack parameter LongPollMaxWait.
	LongPoll bool
	// TimeoutSeconds is the function's timeout when longer than the default.
	TimeoutSeconds float64
	// MemoryMB is the function's memory (functionMemoryMB when 0), which
	// also sizes its caches and its CPU share (1,769 MB: one vCPU).
	MemoryMB   int
	Operations *Operations
	// Pool is the concurrency the function reserves (PoolGroups by default).
	Pool Pool
}

// Function timeouts: longPollTimeout stays below the 29 s API Gateway gives an
// integration, and above the 25 s a ConfigDB wait may take.
const (
	defaultTimeout  = 10
	longPollTimeout = 28
)

// functionMemoryMB is a function's memory unless its props say.
const functionMemoryMB = 256

// NewFunction creates a Go Lambda function (provided.al2023 on arm64) that
// reaches the storage through TUNINGBOX_TABLE and TUNINGBOX_BUCKET, with only
// the table and bucket permissions of its access, traced, capped and watched
// by the stack's Operations.
func NewFunction(scope constructs.Construct, id string, props FunctionProps) awslambda.Function {
	c := constructs.NewConstruct(scope, jsii.String(id))
	timeout := float64(defaultTimeout)
	if props.LongPoll {
		timeout = longPollTimeout
	}
	timeout = max(timeout, props.TimeoutSeconds)
	memory := cmp.Or(props.MemoryMB, functionMemoryMB)
	env := map[string]*string{
		"TUNINGBOX_TABLE":  props.Storage.Table.TableName(),
		"TUNINGBOX_BUCKET": props.Storage.Bucket.BucketName(),
		// Lambda does not tell the Go runtime its memory: collect harder
		// before the function's limit than the default heap doubling would.
		// The caches take a quarter of it (shared/app.Config.CacheBytes).
		"GOMEMLIMIT": jsii.String(fmt.Sprintf("%dMiB", memory*9/10)),
		// A heap of three times the live one before a collection (the limit
		// above still holds): the start-up's few MB then cost no cycle, about
		// a quarter of a group function's start-up CPU at GOGC=100, and CPU
		// is what a 256 MB function lacks (.ci/bench_bootstraps.sh).
		"GOGC": jsii.String("200"),
	}
	if props.LongPoll {
		env["TUNINGBOX_MAX_WAIT"] = props.Operations.LongPollMaxWait.ValueAsString()
	}
	logs := awslogs.NewLogGroup(c, jsii.String("Logs"), &awslogs.LogGroupProps{Retention: accessLogRetention})
	// A role of its own rather than the CDK's default, which carries the
	// managed AWSLambdaBasicExecutionRole (logs on every log group): this
	// one writes to the function's log group only.
	role := awsiam.NewRole(c, jsii.String("Role"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	logs.GrantWrite(role)
	fn := awslambda.NewFunction(c, jsii.String("Function"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Clean(props.CodeDir)), nil),
		MemorySize:   jsii.Number(memory),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(timeout)),
		Environment:  &env,
		// The X-Ray permissions; the mode is the stack parameter Tracing.
		Tracing:  awslambda.Tracing_ACTIVE,
		LogGroup: logs,
		Role:     role,
	})
	props.Operations.configureFunction(props.Name, fn, timeout, props.LongPoll, props.Pool)
	grantTable(fn, props.Storage, tableReadActions, props.Access.Read)
	grantTable(fn, props.Storage, tableWriteActions, props.Access.Write)
	grantBlobs(fn, props.Storage, props.Access.Blobs)
	suppressFunctionFindings(role, props.Storage) // after the grants: it applies to the role's policy as it is then
	return fn
}

// grantTable allows actions on the items whose partition key starts with one
// of prefixes (dynamodb:LeadingKeys), and nothing when there are none.
func grantTable(fn awslambda.Function, storage *Storage, actions, prefixes []string) {
	if len(prefixes) == 0 {
		return
	}
	keys := make([]string, len(prefixes))
	for i, p := range prefixes {
		keys[i] = p + "*"
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: jsii.Strings(*storage.Table.TableArn()),
		// ForAllValues: every key of a BatchGetItem, every item of a transaction.
		Conditions: &map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": keys}},
	}))
}

// grantBlobs allows the blob access on the bucket's blob keys.
func grantBlobs(fn awslambda.Function, storage *Storage, access keyspace.BlobAccess) {
	if access == keyspace.BlobsNone {
		return
	}
	bucket := storage.Bucket
	objectActions := []string{"s3:GetObject"}
	if access >= keyspace.BlobsReadWrite {
		objectActions = append(objectActions, "s3:PutObject")
	}
	if access == keyspace.BlobsCollect {
		// A delete without a version id: the sweep leaves a delete marker and
		// can destroy no version (the bucket's lifecycle expires them).
		objectActions = append(objectActions, "s3:DeleteObject")
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(objectActions...),
		Resources: jsii.Strings(*bucket.ArnForObjects(jsii.String(blobKeys))),
	}))
	// Without ListBucket, S3 answers a GET of a missing blob with 403 instead
	// of 404, which the store would report as a failure rather than not-found
	// (a GET carries no s3:prefix, so this one cannot be narrowed).
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:ListBucket"),
		Resources: jsii.Strings(*bucket.BucketArn()),
	}))
}
