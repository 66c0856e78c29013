package awsstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"

	"github.com/tuningbox/tuningbox/shared/store"
)

// Config names the AWS resources of a backend.
type Config struct {
	// Table is the DynamoDB table of the index.
	Table string
	// Bucket is the S3 bucket of the blobs.
	Bucket string
	// PathStyle addresses the bucket in the URL path (emulators, LocalStack)
	// instead of the host name.
	PathStyle bool
	// Logger receives the SDK's own log lines (retries, response warnings), in
	// the process's format; nil means slog's default.
	Logger *slog.Logger
}

// New returns the backend over the given clients; Close is nil (the clients hold nothing to release).
func New(ddb DynamoDBAPI, s3c S3API, cfg Config) store.Backend {
	return store.Backend{
		Index: &index{ddb: ddb, table: cfg.Table},
		Blobs: &blobs{s3: s3c, bucket: cfg.Bucket},
	}
}

// Connect builds the DynamoDB and S3 clients once, from the SDK's default
// configuration and opts, and returns the backend over them. Their calls are
// counted into the CallCounter of the request context (WithCallCounter).
func Connect(ctx context.Context, cfg Config, opts ...func(*config.LoadOptions) error) (store.Backend, error) {
	ddb, s3c, err := clients(ctx, cfg, opts)
	if err != nil {
		return store.Backend{}, err
	}
	return New(ddb, s3c, cfg), nil
}

// sdkLogger sends the SDK's own log lines to logger (slog's default when nil).
func sdkLogger(logger *slog.Logger) logging.Logger {
	if logger == nil {
		logger = slog.Default()
	}
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		level := slog.LevelInfo
		if c == logging.Warn {
			level = slog.LevelWarn
		}
		logger.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
	})
}

func clients(ctx context.Context, cfg Config, opts []func(*config.LoadOptions) error) (*dynamodb.Client, *s3.Client, error) {
	if cfg.Table == "" || cfg.Bucket == "" {
		return nil, nil, errors.New("awsstore: a table and a bucket are required")
	}
	opts = append([]func(*config.LoadOptions) error{
		config.WithAPIOptions([]func(*middleware.Stack) error{CountCalls}),
		config.WithLogger(sdkLogger(cfg.Logger)),
	}, opts...)
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("awsstore: load AWS configuration: %w", err)
	}
	ddb := dynamodb.NewFromConfig(awsCfg)
	s3c := s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = cfg.PathStyle })
	return ddb, s3c, nil
}

// EnsureResources creates the table (on-demand) and the bucket (versioning on)
// of cfg when they are missing. It is meant for emulators and local use; in
// AWS the infrastructure stack owns both.
func EnsureResources(ctx context.Context, cfg Config, opts ...func(*config.LoadOptions) error) error {
	ddb, s3c, err := clients(ctx, cfg, opts)
	if err != nil {
		return err
	}
	if err := ensureTable(ctx, ddb, cfg.Table); err != nil {
		return fmt.Errorf("awsstore: table %s: %w", cfg.Table, err)
	}
	if err := ensureBucket(ctx, s3c, cfg.Bucket); err != nil {
		return fmt.Errorf("awsstore: bucket %s: %w", cfg.Bucket, err)
	}
	return nil
}

func ensureTable(ctx context.Context, ddb *dynamodb.Client, table string) error {
	_, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err == nil {
		return nil
	}
	if !errors.As(err, new(*ddbtypes.ResourceNotFoundException)) {
		return err
	}
	_, err = ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   &table,
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrSK), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: ddbtypes.KeyTypeRange},
		},
	})
	// ResourceInUse: someone else is creating it right now; wait for it like for ours.
	if err != nil && !errors.As(err, new(*ddbtypes.ResourceInUseException)) {
		return err
	}
	return dynamodb.NewTableExistsWaiter(ddb).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, time.Minute)
}

func ensureBucket(ctx context.Context, s3c *s3.Client, bucket string) error {
	_, err := s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket})
	if errors.As(err, new(*s3types.NotFound)) {
		in := &s3.CreateBucketInput{Bucket: &bucket}
		// us-east-1 is the default location and must not be named.
		if region := s3c.Options().Region; region != "" && region != "us-east-1" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{
				LocationConstraint: s3types.BucketLocationConstraint(region),
			}
		}
		_, err = s3c.CreateBucket(ctx, in)
		if errors.As(err, new(*s3types.BucketAlreadyOwnedByYou)) {
			err = nil // created concurrently by us
		}
	}
	if err != nil {
		return err
	}
	_, err = s3c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  &bucket,
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
	})
	return err
}
