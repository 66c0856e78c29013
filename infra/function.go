package main

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The grants below are exactly the calls shared/store/awsstore makes; a
// TransactWriteItems call is authorized by the actions of its items.
var (
	tableReadActions  = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
	tableWriteActions = []string{"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
	// blobKeys are the object keys awsstore uses (blobs/<hex sha256>).
	blobKeys = "blobs/*"
)

// FunctionProps configures one tuningbox Lambda function.
type FunctionProps struct {
	// CodeDir holds the function's bootstrap binary (bin/<name> after make build).
	CodeDir string
	Storage *Storage
	// TableWrite grants the write actions on the table besides the reads.
	TableWrite bool
	Blobs      BlobAccess
	// LongPoll raises the timeout from defaultTimeout to longPollTimeout.
	LongPoll bool
	// TimeoutSeconds is the function's timeout when longer than the default.
	TimeoutSeconds float64
}

// Function timeouts: longPollTimeout stays below the 29 s API Gateway gives an
// integration, and above the 25 s a ConfigDB wait may take.
const (
	defaultTimeout  = 10
	longPollTimeout = 28
)

// functionMemoryMB is every function's memory, which also sizes its caches.
const functionMemoryMB = 256

// NewFunction creates a Go Lambda function (provided.al2023 on arm64) that
// reaches the storage through TUNINGBOX_TABLE and TUNINGBOX_BUCKET, with only
// the table and bucket permissions that props grant.
func NewFunction(scope constructs.Construct, id string, props FunctionProps) awslambda.Function {
	c := constructs.NewConstruct(scope, jsii.String(id))
	timeout := defaultTimeout
	if props.LongPoll {
		timeout = longPollTimeout
	}
	fn := awslambda.NewFunction(c, jsii.String("Function"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Clean(props.CodeDir)), nil),
		MemorySize:   jsii.Number(functionMemoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(max(float64(timeout), props.TimeoutSeconds))),
		// The app reads both names at start-up whatever it touches.
		Environment: &map[string]*string{
			"TUNINGBOX_TABLE":  props.Storage.Table.TableName(),
			"TUNINGBOX_BUCKET": props.Storage.Bucket.BucketName(),
			// Lambda does not tell the Go runtime its memory: collect harder
			// before the function's limit than the default heap doubling would.
			// The caches take a quarter of it (shared/app.Config.CacheBytes).
			"GOMEMLIMIT": jsii.String(fmt.Sprintf("%dMiB", functionMemoryMB*9/10)),
		},
		LogGroup: awslogs.NewLogGroup(c, jsii.String("Logs"), &awslogs.LogGroupProps{
			Retention: awslogs.RetentionDays_ONE_MONTH,
		}),
	})

	actions := tableReadActions
	if props.TableWrite {
		actions = slices.Concat(tableReadActions, tableWriteActions)
	}
	props.Storage.Table.Grant(fn, *jsii.Strings(actions...)...)

	if props.Blobs == BlobsNone {
		return fn
	}
	bucket := props.Storage.Bucket
	objectActions := []string{"s3:GetObject"}
	bucketActions := []string{"s3:ListBucket"}
	if props.Blobs >= BlobsReadWrite {
		objectActions = append(objectActions, "s3:PutObject")
	}
	if props.Blobs == BlobsCollect {
		objectActions = append(objectActions, "s3:DeleteObject", "s3:DeleteObjectVersion")
		bucketActions = append(bucketActions, "s3:ListBucketVersions")
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(objectActions...),
		Resources: jsii.Strings(*bucket.ArnForObjects(jsii.String(blobKeys))),
	}))
	// Without ListBucket, S3 answers a GET of a missing blob with 403 instead
	// of 404, which the store would report as a failure rather than not-found.
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(bucketActions...),
		Resources: jsii.Strings(*bucket.BucketArn()),
	}))
	return fn
}
