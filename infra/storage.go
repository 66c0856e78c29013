package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// pointInTimeRecoveryDays is the table's recovery window (DynamoDB keeps 35
// days unless told fewer), and noncurrentVersionDays how long the bucket keeps
// a swept blob's bytes: as long, so that an index restored to any point of
// the window finds every blob it refers to (docs/aws.md, the restore drill).
const (
	pointInTimeRecoveryDays = 35
	noncurrentVersionDays   = pointInTimeRecoveryDays
)

// Storage is the data of a deployment: the index table and the blob bucket
// that shared/store/awsstore uses (see its package doc for the key design).
type Storage struct {
	Table  awsdynamodb.Table
	Bucket awss3.Bucket
}

// NewStorage creates the table and the bucket. Both are retained when the
// stack is deleted: they hold the only copy of the configuration data; the
// table is also protected from deletion by anyone (turn DeletionProtection
// off first to delete it on purpose).
func NewStorage(scope constructs.Construct, id string) *Storage {
	c := constructs.NewConstruct(scope, jsii.String(id))
	table := awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String("sk"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
			RecoveryPeriodInDays:       jsii.Number(pointInTimeRecoveryDays),
		},
		DeletionProtection: jsii.Bool(true),
		// Audit records carry their expiry here (shared/store/awsstore's
		// attrExpires); DynamoDB deletes them after it, at no cost.
		TimeToLiveAttribute: jsii.String("expires_at"),
	})
	// S3-managed keys: encrypted at rest without a KMS key whose grants every
	// reader would need.
	bucket := awss3.NewBucket(c, jsii.String("Blobs"), &awss3.BucketProps{
		Versioned:         jsii.Bool(true),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		// Blobs are never overwritten: a noncurrent version exists only after
		// the sweep deleted a blob (a delete marker over it) or after a
		// deletion by hand, which versioning lets one undo for this long.
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("noncurrent-versions-and-incomplete-uploads"),
			NoncurrentVersionExpiration:         awscdk.Duration_Days(jsii.Number(noncurrentVersionDays)),
			ExpiredObjectDeleteMarker:           jsii.Bool(true),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
	})
	return &Storage{Table: table, Bucket: bucket}
}
