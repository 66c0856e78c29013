package awsstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Service ids of the counted clients, as the SDK names them.
const (
	serviceDynamoDB = "DynamoDB"
	serviceS3       = "S3"
)

// CallCounter counts the AWS requests made under one context, by service and
// operation. Every attempt is a request, so retries count. It is safe for concurrent use.
type CallCounter struct {
	mu    sync.Mutex
	calls map[string]map[string]int // service -> operation -> requests
}

type callCounterKey struct{}

// WithCallCounter returns a context whose AWS requests (made by clients with
// CountCalls in their stack, as Connect builds them) are counted into the returned counter.
func WithCallCounter(ctx context.Context) (context.Context, *CallCounter) {
	c := &CallCounter{calls: make(map[string]map[string]int)}
	return context.WithValue(ctx, callCounterKey{}, c), c
}

// DynamoDB returns the DynamoDB requests so far by operation name (e.g. "BatchGetItem").
func (c *CallCounter) DynamoDB() map[string]int { return c.service(serviceDynamoDB) }

// S3 returns the S3 requests so far by operation name (e.g. "GetObject").
func (c *CallCounter) S3() map[string]int { return c.service(serviceS3) }

func (c *CallCounter) service(id string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls[id])
}

// String lists the counts, e.g. "DynamoDB BatchGetItem=1; S3 GetObject=2".
func (c *CallCounter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for _, svc := range slices.Sorted(maps.Keys(c.calls)) {
		var ops []string
		for _, op := range slices.Sorted(maps.Keys(c.calls[svc])) {
			ops = append(ops, fmt.Sprintf("%s=%d", op, c.calls[svc][op]))
		}
		parts = append(parts, svc+" "+strings.Join(ops, " "))
	}
	if len(parts) == 0 {
		return "no calls"
	}
	return strings.Join(parts, "; ")
}

func (c *CallCounter) add(service, operation string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[service] == nil {
		c.calls[service] = make(map[string]int)
	}
	c.calls[service][operation]++
}

// CountCalls adds the call-counting middleware to an SDK client's stack; use it
// with config.WithAPIOptions or a client's APIOptions. It sits after the retry
// middleware, so it sees every attempt.
func CountCalls(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("tuningbox.CountCalls",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if c, ok := ctx.Value(callCounterKey{}).(*CallCounter); ok {
				c.add(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx))
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}
