package awsstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tuningbox/tuningbox/shared/retry"
	"github.com/tuningbox/tuningbox/shared/store"
)

// fakeDDB answers the calls a test scripts and records every call's name.
// A call the test did not script panics on the nil embedded interface.
type fakeDDB struct {
	DynamoDBAPI
	calls    []string
	getItem  func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error)
	batchGet func(*dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error)
	query    func(*dynamodb.QueryInput) (*dynamodb.QueryOutput, error)
	update   func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error)
	delete   func(*dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error)
	transact func(*dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error)
}

func (f *fakeDDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.calls = append(f.calls, "GetItem")
	return f.getItem(in)
}

func (f *fakeDDB) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.calls = append(f.calls, "BatchGetItem")
	return f.batchGet(in)
}

func (f *fakeDDB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.calls = append(f.calls, "Query")
	return f.query(in)
}

func (f *fakeDDB) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.calls = append(f.calls, "UpdateItem")
	return f.update(in)
}

func (f *fakeDDB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.calls = append(f.calls, "DeleteItem")
	return f.delete(in)
}

func (f *fakeDDB) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.calls = append(f.calls, "TransactWriteItems")
	return f.transact(in)
}

func storedItem(k store.Key, value string, rev int64) map[string]types.AttributeValue {
	av := keyAttrs(k)
	av[attrRev] = number(rev)
	av[attrVal] = &types.AttributeValueMemberB{Value: []byte(value)}
	return av
}

func canceled(codes ...string) error {
	reasons := make([]types.CancellationReason, len(codes))
	for i, c := range codes {
		reasons[i].Code = aws.String(c)
	}
	return &types.TransactionCanceledException{Message: aws.String("canceled"), CancellationReasons: reasons}
}

var (
	keyA = store.Key{Partition: "p", Sort: "a"}
	keyB = store.Key{Partition: "p", Sort: "b"}
)

func TestWrite(t *testing.T) {
	ok := func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{}, nil
	}
	tests := []struct {
		name      string
		ops       []store.Op
		fake      fakeDDB
		wantCalls []string
		wantErr   error // nil, store.ErrConflict, or errOther for any other error
	}{
		{
			name:      "one put is an UpdateItem",
			ops:       []store.Op{store.Put(keyA, []byte("v"))},
			fake:      fakeDDB{update: ok},
			wantCalls: []string{"UpdateItem"},
		},
		{
			name: "failed condition of a single write",
			ops:  []store.Op{store.Create(keyA, []byte("v"))},
			fake: fakeDDB{update: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
				return nil, &types.ConditionalCheckFailedException{Message: aws.String("failed")}
			}},
			wantCalls: []string{"UpdateItem"},
			wantErr:   store.ErrConflict,
		},
		{
			name: "single write on an item locked by a transaction is retried",
			ops:  []store.Op{store.DeleteAt(keyA, 3)},
			fake: fakeDDB{delete: func() func(*dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
				n := 0
				return func(*dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
					if n++; n == 1 {
						return nil, &types.TransactionConflictException{Message: aws.String("locked")}
					}
					return &dynamodb.DeleteItemOutput{}, nil
				}
			}()},
			wantCalls: []string{"DeleteItem", "DeleteItem"},
		},
		{
			name: "several operations are one transaction",
			ops:  []store.Op{store.Put(keyA, []byte("v")), store.Check(keyB, store.Cond{Kind: store.MustExist})},
			fake: fakeDDB{transact: func(in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
				if len(in.TransactItems) != 2 || in.TransactItems[0].Update == nil || in.TransactItems[1].ConditionCheck == nil {
					return nil, fmt.Errorf("unexpected items %+v", in.TransactItems)
				}
				return &dynamodb.TransactWriteItemsOutput{}, nil
			}},
			wantCalls: []string{"TransactWriteItems"},
		},
		{
			name: "failed condition of a transaction",
			ops:  []store.Op{store.Put(keyA, []byte("v")), store.Create(keyB, nil)},
			fake: fakeDDB{transact: func(*dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
				return nil, canceled("None", "ConditionalCheckFailed")
			}},
			wantCalls: []string{"TransactWriteItems"},
			wantErr:   store.ErrConflict,
		},
		{
			name: "transaction conflicting with another one is retried",
			ops:  []store.Op{store.Put(keyA, []byte("v")), store.Delete(keyB)},
			fake: fakeDDB{transact: func() func(*dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
				n := 0
				return func(*dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
					if n++; n < 3 {
						return nil, canceled("TransactionConflict", "None")
					}
					return &dynamodb.TransactWriteItemsOutput{}, nil
				}
			}()},
			wantCalls: []string{"TransactWriteItems", "TransactWriteItems", "TransactWriteItems"},
		},
		{
			name: "a cancellation for another reason is not a conflict",
			ops:  []store.Op{store.Put(keyA, []byte("v")), store.Delete(keyB)},
			fake: fakeDDB{transact: func(*dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
				return nil, canceled("ValidationError", "None")
			}},
			wantCalls: []string{"TransactWriteItems"},
			wantErr:   errOther,
		},
		{
			name: "a service failure is not a conflict",
			ops:  []store.Op{store.Put(keyA, []byte("v"))},
			fake: fakeDDB{update: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
				return nil, &types.InternalServerError{Message: aws.String("boom")}
			}},
			wantCalls: []string{"UpdateItem"},
			wantErr:   errOther,
		},
		{
			name: "a lone check is a consistent read",
			ops:  []store.Op{store.Check(keyA, store.Cond{Kind: store.RevisionIs, Revision: 2})},
			fake: fakeDDB{getItem: func(in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
				if !aws.ToBool(in.ConsistentRead) {
					return nil, errors.New("inconsistent read")
				}
				return &dynamodb.GetItemOutput{Item: storedItem(keyA, "v", 3)}, nil
			}},
			wantCalls: []string{"GetItem"},
			wantErr:   store.ErrConflict,
		},
		{
			name:      "checks without a condition cost nothing",
			ops:       []store.Op{store.Check(keyA, store.Cond{}), store.Check(keyB, store.Cond{}), store.Put(store.Key{Partition: "p", Sort: "c"}, nil)},
			fake:      fakeDDB{update: ok},
			wantCalls: []string{"UpdateItem"},
		},
		{
			name:    "a key twice in one batch is invalid, not a conflict",
			ops:     []store.Op{store.Put(keyA, nil), store.Delete(keyA)},
			wantErr: errOther,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := &index{ddb: &tt.fake, table: "t"}
			err := idx.Write(context.Background(), tt.ops...)
			checkErr(t, err, tt.wantErr)
			if !slices.Equal(tt.fake.calls, tt.wantCalls) {
				t.Errorf("calls = %v, want %v", tt.fake.calls, tt.wantCalls)
			}
		})
	}
}

// TestPutExpiry: a put with Expires sets the table's TTL attribute (Unix
// seconds), alone and in a transaction; a put without it removes an earlier one.
func TestPutExpiry(t *testing.T) {
	expires := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	expiring := store.Create(keyA, []byte("v"))
	expiring.Expires = expires
	wantExpiring := func(expr *string, values map[string]types.AttributeValue) error {
		exp, _ := values[":exp"].(*types.AttributeValueMemberN)
		if !strings.Contains(aws.ToString(expr), attrExpires+" = :exp") || exp == nil || exp.Value != strconv.FormatInt(expires.Unix(), 10) {
			return fmt.Errorf("expiring put: %s %v", aws.ToString(expr), values)
		}
		return nil
	}
	fake := &fakeDDB{
		update: func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
			return &dynamodb.UpdateItemOutput{}, wantExpiring(in.UpdateExpression, in.ExpressionAttributeValues)
		},
		transact: func(in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
			if u := in.TransactItems[0].Update; u == nil || wantExpiring(u.UpdateExpression, u.ExpressionAttributeValues) != nil {
				return nil, fmt.Errorf("transaction's expiring put: %+v", in.TransactItems[0])
			}
			if u := in.TransactItems[1].Update; u == nil || !strings.Contains(aws.ToString(u.UpdateExpression), "REMOVE "+attrExpires) || u.ExpressionAttributeValues[":exp"] != nil {
				return nil, fmt.Errorf("transaction's plain put: %+v", in.TransactItems[1])
			}
			return &dynamodb.TransactWriteItemsOutput{}, nil
		},
	}
	idx := &index{ddb: fake, table: "t"}
	if err := idx.Write(t.Context(), expiring); err != nil {
		t.Fatal(err)
	}
	if err := idx.Write(t.Context(), expiring, store.Put(keyB, []byte("w"))); err != nil {
		t.Fatal(err)
	}
}

// errOther stands for "an error that is neither ErrConflict nor ErrNotFound".
var errOther = errors.New("any other error")

func checkErr(t *testing.T, err, want error) {
	t.Helper()
	switch want {
	case nil:
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
	case errOther:
		if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			t.Fatalf("err = %v, want an error other than ErrConflict and ErrNotFound", err)
		}
	default:
		if !errors.Is(err, want) {
			t.Fatalf("err = %v, want %v", err, want)
		}
	}
}

func TestBatchGetRetriesUnprocessedKeys(t *testing.T) {
	var keys []store.Key
	for i := range 150 {
		keys = append(keys, store.Key{Partition: "p", Sort: strconv.Itoa(i)})
	}
	keys = append(keys, keys[0]) // a duplicate: BatchGetItem would reject it
	var sizes []int
	fake := &fakeDDB{batchGet: func(in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error) {
		req := in.RequestItems["t"]
		if !aws.ToBool(req.ConsistentRead) {
			return nil, errors.New("inconsistent read")
		}
		sizes = append(sizes, len(req.Keys))
		// Serve the first key of every request and leave the rest unprocessed.
		out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
		k := store.Key{Partition: "p", Sort: req.Keys[0][attrSK].(*types.AttributeValueMemberS).Value}
		out.Responses["t"] = []map[string]types.AttributeValue{storedItem(k, "v"+k.Sort, 1)}
		if len(req.Keys) > 1 {
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{"t": {Keys: req.Keys[1:], ConsistentRead: req.ConsistentRead}}
		}
		return out, nil
	}}
	idx := &index{ddb: fake, table: "t"}
	got, err := idx.BatchGet(context.Background(), keys[:3])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got[keys[2]].Value) != "v2" || !slices.Equal(sizes, []int{3, 2, 1}) {
		t.Fatalf("got %d items, request sizes %v; want 3 items after requests of 3, 2, 1 keys", len(got), sizes)
	}

	// More keys than DynamoDB takes in one call are refused, not split.
	fake.calls = nil
	if _, err := idx.BatchGet(context.Background(), keys); err == nil || len(fake.calls) != 0 {
		t.Fatalf("BatchGet of %d keys = %v after %d calls; want an error and no call", len(keys), err, len(fake.calls))
	}
}

func TestBatchGetGivesUpOnKeysThatStayUnprocessed(t *testing.T) {
	fake := &fakeDDB{batchGet: func(in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error) {
		return &dynamodb.BatchGetItemOutput{UnprocessedKeys: in.RequestItems}, nil
	}}
	idx := &index{ddb: fake, table: "t"}
	if _, err := idx.BatchGet(context.Background(), []store.Key{keyA}); err == nil {
		t.Fatal("BatchGet succeeded with keys never processed")
	}
	if len(fake.calls) != retry.Default.Attempts {
		t.Fatalf("%d calls, want %d", len(fake.calls), retry.Default.Attempts)
	}
}

func TestQueryPagesUntilLimit(t *testing.T) {
	// The table holds sort keys 00..09; every page returns at most 3 of them.
	var limits []int32
	fake := &fakeDDB{query: func(in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
		limits = append(limits, aws.ToInt32(in.Limit))
		start := 0
		if in.ExclusiveStartKey != nil {
			n, _ := strconv.Atoi(in.ExclusiveStartKey[attrSK].(*types.AttributeValueMemberS).Value)
			start = n + 1
		}
		out := &dynamodb.QueryOutput{}
		end := min(start+min(3, int(aws.ToInt32(in.Limit))), 10)
		for i := start; i < end; i++ {
			out.Items = append(out.Items, storedItem(store.Key{Partition: "p", Sort: fmt.Sprintf("%02d", i)}, "", 1))
		}
		if end < 10 {
			out.LastEvaluatedKey = keyAttrs(store.Key{Partition: "p", Sort: fmt.Sprintf("%02d", end-1)})
		}
		return out, nil
	}}
	idx := &index{ddb: fake, table: "t"}
	items, err := idx.Query(context.Background(), store.Query{Partition: "p", After: "01", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var sorts []string
	for _, it := range items {
		sorts = append(sorts, it.Sort)
	}
	if !slices.Equal(sorts, []string{"02", "03", "04", "05", "06"}) || !slices.Equal(limits, []int32{5, 2}) {
		t.Fatalf("sort keys %v with page limits %v, want 02..06 with limits [5 2]", sorts, limits)
	}
}

func TestStartAfter(t *testing.T) {
	tests := []struct {
		prefix, after string
		reverse       bool
		wantAfter     string
		wantNone      bool
	}{
		{prefix: "", after: "", wantAfter: ""},
		{prefix: "", after: "m", wantAfter: "m"},
		{prefix: "b", after: "bx", wantAfter: "bx"},
		{prefix: "b", after: "b", reverse: true, wantAfter: "b"},
		{prefix: "b", after: "a", wantAfter: ""},                 // below the range, forward: everything
		{prefix: "b", after: "c", wantNone: true},                // above the range, forward: nothing
		{prefix: "b", after: "a", reverse: true, wantNone: true}, // below the range, backward: nothing
		{prefix: "b", after: "c", reverse: true, wantAfter: ""},  // above the range, backward: everything
		{prefix: "ba", after: "b", wantAfter: ""},                // "b" sorts before every "ba..."
		{prefix: "ba", after: "bb", reverse: true, wantAfter: ""},
	}
	for _, tt := range tests {
		after, none := startAfter(store.Query{Partition: "p", Prefix: tt.prefix, After: tt.after, Reverse: tt.reverse})
		if after != tt.wantAfter || none != tt.wantNone {
			t.Errorf("startAfter(prefix %q, after %q, reverse %v) = %q, %v; want %q, %v",
				tt.prefix, tt.after, tt.reverse, after, none, tt.wantAfter, tt.wantNone)
		}
	}
}

func TestGetTranslatesAbsence(t *testing.T) {
	fake := &fakeDDB{getItem: func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{}, nil
	}}
	idx := &index{ddb: fake, table: "t"}
	if _, err := idx.Get(context.Background(), keyA); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get of a missing item = %v, want ErrNotFound", err)
	}
	fake.getItem = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return nil, &types.ResourceNotFoundException{Message: aws.String("no table")}
	}
	_, err := idx.Get(context.Background(), keyA)
	checkErr(t, err, errOther) // a missing table is a failure, not a missing item
}
