package graphs_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tuningbox/tuningbox/shared/graphs"
)

// A waiting cluster claim answers as soon as an execution starts, and idle
// when its wait runs out or the server drains.
func TestClaimInClusterWaitsForWork(t *testing.T) { synctest.Test(t, testClaimInClusterWaitsForWork) }

func testClaimInClusterWaitsForWork(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	start := time.Now()
	if c := must[graphs.Claim](t)(s.ClaimInCluster(ctx, 1, "n1", 50*time.Millisecond, nil)); c.Action != graphs.ActionIdle {
		t.Fatalf("claim = %+v", c)
	}
	stop := make(chan struct{})
	close(stop)
	if c := must[graphs.Claim](t)(s.ClaimInCluster(ctx, 1, "n1", 20*time.Second, stop)); c.Action != graphs.ActionIdle {
		t.Fatalf("claim while draining = %+v", c)
	}
	claims := make(chan graphs.Claim, 1)
	go func() {
		c, err := s.ClaimInCluster(ctx, 1, "n1", 20*time.Second, nil)
		if err != nil {
			t.Error(err)
		}
		claims <- c
	}()
	synctest.Wait() // the claim waits
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade", Nodes: []graphs.NodeID{"n1"}}}}))
	select {
	case c := <-claims:
		if c.Action != graphs.ActionTask || c.Task.ID() != "u" || c.Transaction != tx.UUID {
			t.Fatalf("claim = %+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting claim did not wake up")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("claims waited longer than asked")
	}
	// n2 takes no part: done, after waiting for another transaction.
	if c := must[graphs.Claim](t)(s.ClaimInCluster(ctx, 1, "n2", 10*time.Millisecond, nil)); c.Action != graphs.ActionDone || c.Transaction != tx.UUID {
		t.Fatalf("claim of n2 = %+v", c)
	}
}

// A claim answers a second before its request's deadline (a Lambda
// function's timeout), however long it was asked to wait.
func TestClaimInClusterAnswersBeforeTheDeadline(t *testing.T) {
	synctest.Test(t, testClaimInClusterAnswersBeforeTheDeadline)
}

func testClaimInClusterAnswersBeforeTheDeadline(t *testing.T) {
	s := newService(t)
	setupExecution(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	c, err := s.ClaimInCluster(ctx, 1, "n1", 20*time.Second, nil)
	if err != nil {
		t.Fatalf("claim: %v (the request's deadline passed before the answer)", err)
	}
	if c.Action != graphs.ActionIdle {
		t.Fatalf("claim = %+v, want idle", c)
	}
	if ctx.Err() != nil {
		t.Fatal("the claim answered after its request's deadline")
	}
}
