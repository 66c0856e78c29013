#!/bin/bash
# LocalStack init hook (runs inside the container once S3 and DynamoDB are up):
# creates the table and the versioned bucket `tuningbox serve --backend aws` uses,
# with the same key design as awsstore.EnsureResources (pk S hash, sk S range, on-demand).
set -euo pipefail
table=${TUNINGBOX_TABLE:-tuningbox}
bucket=${TUNINGBOX_BUCKET:-tuningbox-blobs}

if ! awslocal dynamodb describe-table --table-name "$table" >/dev/null 2>&1; then
  awslocal dynamodb create-table --table-name "$table" --billing-mode PAY_PER_REQUEST \
    --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=S \
    --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE >/dev/null
  awslocal dynamodb wait table-exists --table-name "$table"
fi
if ! awslocal s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
  awslocal s3api create-bucket --bucket "$bucket" >/dev/null
fi
awslocal s3api put-bucket-versioning --bucket "$bucket" --versioning-configuration Status=Enabled
touch /tmp/tuningbox-ready
echo "tuningbox: table $table and versioned bucket $bucket ready"
