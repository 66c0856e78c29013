package awsstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tuningbox/tuningbox/shared/retry"
	"github.com/tuningbox/tuningbox/shared/store"
)

// DynamoDBAPI is the part of the DynamoDB client the index uses.
type DynamoDBAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Attribute names of the table (see the package documentation).
const (
	attrPK  = "pk"
	attrSK  = "sk"
	attrRev = "rev"
	attrVal = "val"
	// attrExpires is the table's TTL attribute (store.Op.Expires, in Unix seconds).
	attrExpires = "expires_at"
)

// putExpression stores the value, clears an expiry and moves the revision:
// ADD creates rev=1 on a new item; putExpiringExpression sets the expiry.
const (
	putExpression         = "SET " + attrVal + " = :val REMOVE " + attrExpires + " ADD " + attrRev + " :one"
	putExpiringExpression = "SET " + attrVal + " = :val, " + attrExpires + " = :exp ADD " + attrRev + " :one"
)

type index struct {
	ddb   DynamoDBAPI
	table string
}

func (x *index) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if err := store.CheckKey(k); err != nil {
		return store.Item{}, err
	}
	out, err := x.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &x.table,
		Key:            keyAttrs(k),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("get %s: %w", keyString(k), err)
	}
	if out.Item == nil {
		return store.Item{}, store.ErrNotFound
	}
	return decodeItem(out.Item)
}

func (x *index) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	if len(keys) > store.MaxBatchGet {
		return nil, fmt.Errorf("batch get of %d keys: at most %d allowed", len(keys), store.MaxBatchGet)
	}
	items := make(map[store.Key]store.Item, len(keys))
	if len(keys) == 0 {
		return items, nil
	}
	// BatchGetItem rejects duplicate keys in one request.
	seen := make(map[store.Key]bool, len(keys))
	unique := make([]map[string]types.AttributeValue, 0, len(keys))
	for _, k := range keys {
		if err := store.CheckKey(k); err != nil {
			return nil, err
		}
		if !seen[k] {
			seen[k] = true
			unique = append(unique, keyAttrs(k))
		}
	}
	request := map[string]types.KeysAndAttributes{x.table: {Keys: unique, ConsistentRead: aws.Bool(true)}}
	for attempt := 0; len(request) > 0; attempt++ {
		if attempt == retry.Default.Attempts {
			return nil, fmt.Errorf("batch get: keys still unprocessed after %d attempts", attempt)
		}
		if err := retry.Default.Wait(ctx, attempt); err != nil {
			return nil, err
		}
		out, err := x.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: request})
		if err != nil {
			return nil, fmt.Errorf("batch get: %w", err)
		}
		for _, av := range out.Responses[x.table] {
			it, err := decodeItem(av)
			if err != nil {
				return nil, err
			}
			items[it.Key] = it
		}
		request = out.UnprocessedKeys
	}
	return items, nil
}

func (x *index) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	if err := store.CheckPartition(q.Partition); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("query: negative limit %d", q.Limit)
	}
	after, none := startAfter(q)
	if none {
		return nil, nil
	}
	cond := attrPK + " = :pk"
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: q.Partition}}
	if q.Prefix != "" {
		cond += " AND begins_with(" + attrSK + ", :prefix)"
		values[":prefix"] = &types.AttributeValueMemberS{Value: q.Prefix}
	}
	in := &dynamodb.QueryInput{
		TableName:                 &x.table,
		KeyConditionExpression:    &cond,
		ExpressionAttributeValues: values,
		ConsistentRead:            aws.Bool(true),
		ScanIndexForward:          aws.Bool(!q.Reverse),
	}
	if after != "" {
		in.ExclusiveStartKey = keyAttrs(store.Key{Partition: q.Partition, Sort: after})
	}
	var items []store.Item
	for {
		if q.Limit > 0 {
			in.Limit = aws.Int32(int32(q.Limit - len(items)))
		}
		out, err := x.ddb.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.Partition, err)
		}
		for _, av := range out.Items {
			it, err := decodeItem(av)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
		if len(out.LastEvaluatedKey) == 0 || (q.Limit > 0 && len(items) >= q.Limit) {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// startAfter returns the sort key to start a query after ("" for the start of
// the range), or none=true when q selects nothing. DynamoDB rejects a start
// key outside the range of the key condition, and an After outside the prefix
// range either cuts nothing or everything off.
func startAfter(q store.Query) (after string, none bool) {
	if q.After == "" || strings.HasPrefix(q.After, q.Prefix) {
		return q.After, false
	}
	below := q.After < q.Prefix
	// Forward from below the range, or backward from above it, everything is selected.
	return "", below == q.Reverse
}

func (x *index) Write(ctx context.Context, ops ...store.Op) error {
	if len(ops) > store.MaxWriteBatch {
		return fmt.Errorf("write: %d operations, at most %d in one batch", len(ops), store.MaxWriteBatch)
	}
	seen := make(map[store.Key]bool, len(ops))
	effective := make([]store.Op, 0, len(ops))
	for _, op := range ops {
		if err := store.CheckKey(op.Key); err != nil {
			return err
		}
		if seen[op.Key] {
			return fmt.Errorf("write: key %s appears twice in one batch", keyString(op.Key))
		}
		seen[op.Key] = true
		if op.Kind == store.OpPut && len(op.Value) > store.MaxValueSize {
			return fmt.Errorf("put %s: value of %d bytes: %w", keyString(op.Key), len(op.Value), store.ErrValueTooLarge)
		}
		if op.Kind == store.OpCheck && op.Cond.Kind == store.Always {
			continue // checks nothing
		}
		effective = append(effective, op)
	}
	switch len(effective) {
	case 0:
		return nil
	case 1:
		return x.writeOne(ctx, effective[0])
	default:
		return x.transact(ctx, effective)
	}
}

// writeOne applies a single operation with a single-item call, which costs half of a transaction.
func (x *index) writeOne(ctx context.Context, op store.Op) error {
	cond, values := condition(op.Cond)
	var err error
	for attempt := 0; attempt < retry.Default.Attempts; attempt++ {
		if err := retry.Default.Wait(ctx, attempt); err != nil {
			return err
		}
		switch op.Kind {
		case store.OpPut:
			expr, attrs := putUpdate(op, values)
			_, err = x.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 &x.table,
				Key:                       keyAttrs(op.Key),
				UpdateExpression:          expr,
				ConditionExpression:       cond,
				ExpressionAttributeValues: attrs,
			})
		case store.OpDelete:
			_, err = x.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:                 &x.table,
				Key:                       keyAttrs(op.Key),
				ConditionExpression:       cond,
				ExpressionAttributeValues: values,
			})
		case store.OpCheck:
			return x.check(ctx, op)
		default:
			return fmt.Errorf("write %s: unknown operation kind %d", keyString(op.Key), op.Kind)
		}
		if !errors.As(err, new(*types.TransactionConflictException)) {
			break // the item is not locked by a running transaction: done, or a real failure
		}
	}
	return translateWrite(err, "write "+keyString(op.Key))
}

// check evaluates a lone condition with a strongly consistent read: the same
// guarantee as a one-item ConditionCheck transaction, at a quarter of the cost.
func (x *index) check(ctx context.Context, op store.Op) error {
	it, err := x.Get(ctx, op.Key)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	holds := false
	switch op.Cond.Kind {
	case store.MustNotExist:
		holds = !exists
	case store.MustExist:
		holds = exists
	case store.RevisionIs:
		holds = exists && it.Revision == op.Cond.Revision
	}
	if !holds {
		return store.ErrConflict
	}
	return nil
}

// transact applies several operations atomically with one TransactWriteItems.
func (x *index) transact(ctx context.Context, ops []store.Op) error {
	items := make([]types.TransactWriteItem, len(ops))
	for i, op := range ops {
		cond, values := condition(op.Cond)
		switch op.Kind {
		case store.OpPut:
			expr, attrs := putUpdate(op, values)
			items[i].Update = &types.Update{
				TableName:                 &x.table,
				Key:                       keyAttrs(op.Key),
				UpdateExpression:          expr,
				ConditionExpression:       cond,
				ExpressionAttributeValues: attrs,
			}
		case store.OpDelete:
			items[i].Delete = &types.Delete{
				TableName:                 &x.table,
				Key:                       keyAttrs(op.Key),
				ConditionExpression:       cond,
				ExpressionAttributeValues: values,
			}
		case store.OpCheck:
			items[i].ConditionCheck = &types.ConditionCheck{
				TableName:                 &x.table,
				Key:                       keyAttrs(op.Key),
				ConditionExpression:       cond,
				ExpressionAttributeValues: values,
			}
		default:
			return fmt.Errorf("write %s: unknown operation kind %d", keyString(op.Key), op.Kind)
		}
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items}
	var err error
	for attempt := 0; attempt < retry.Default.Attempts; attempt++ {
		if err := retry.Default.Wait(ctx, attempt); err != nil {
			return err
		}
		_, err = x.ddb.TransactWriteItems(ctx, in)
		if !transactionConflict(err) {
			break
		}
	}
	return translateWrite(err, fmt.Sprintf("write %d operations", len(ops)))
}

// transactionConflict reports whether a transaction was cancelled only because
// another transaction held one of its items (worth retrying), not because a condition failed.
func transactionConflict(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return errors.As(err, new(*types.TransactionConflictException))
	}
	conflict := false
	for _, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			return false
		case "TransactionConflict":
			conflict = true
		}
	}
	return conflict
}

// translateWrite turns a failed condition into store.ErrConflict and wraps anything else.
func translateWrite(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.As(err, new(*types.ConditionalCheckFailedException)) {
		return store.ErrConflict
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return store.ErrConflict
			}
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// condition returns the ConditionExpression for c and the values it refers to (nil, nil for Always).
func condition(c store.Cond) (*string, map[string]types.AttributeValue) {
	switch c.Kind {
	case store.MustNotExist:
		return aws.String("attribute_not_exists(" + attrPK + ")"), nil
	case store.MustExist:
		return aws.String("attribute_exists(" + attrPK + ")"), nil
	case store.RevisionIs:
		return aws.String(attrRev + " = :rev"), map[string]types.AttributeValue{":rev": number(c.Revision)}
	default:
		return nil, nil
	}
}

// putUpdate returns the update expression and values of a put under the
// values of its condition.
func putUpdate(op store.Op, cond map[string]types.AttributeValue) (*string, map[string]types.AttributeValue) {
	value := op.Value
	if value == nil {
		value = []byte{} // nil would send no value at all
	}
	values := map[string]types.AttributeValue{
		":val": &types.AttributeValueMemberB{Value: value},
		":one": number(1),
	}
	for k, v := range cond {
		values[k] = v
	}
	if op.Expires.IsZero() {
		return aws.String(putExpression), values
	}
	values[":exp"] = number(op.Expires.Unix())
	return aws.String(putExpiringExpression), values
}

func number(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func keyAttrs(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: k.Partition},
		attrSK: &types.AttributeValueMemberS{Value: k.Sort},
	}
}

func decodeItem(av map[string]types.AttributeValue) (store.Item, error) {
	pk, okP := av[attrPK].(*types.AttributeValueMemberS)
	sk, okS := av[attrSK].(*types.AttributeValueMemberS)
	rev, okR := av[attrRev].(*types.AttributeValueMemberN)
	if !okP || !okS || !okR {
		return store.Item{}, fmt.Errorf("malformed item: want %s S, %s S, %s N", attrPK, attrSK, attrRev)
	}
	it := store.Item{Key: store.Key{Partition: pk.Value, Sort: sk.Value}}
	var err error
	if it.Revision, err = strconv.ParseInt(rev.Value, 10, 64); err != nil {
		return store.Item{}, fmt.Errorf("item %s: revision: %w", keyString(it.Key), err)
	}
	if val, ok := av[attrVal].(*types.AttributeValueMemberB); ok {
		it.Value = val.Value
	}
	return it, nil
}

func keyString(k store.Key) string { return strconv.Quote(k.Partition) + "/" + strconv.Quote(k.Sort) }
