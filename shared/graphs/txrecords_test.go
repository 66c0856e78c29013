package graphs

import (
	"slices"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store"
)

// A transaction's record is decoded once per revision; what a caller changes
// in the copy it gets does not change the next caller's.
func TestTransactionRecordsDecodedOncePerRevision(t *testing.T) {
	s := NewService(nil, nil, nil)
	it := store.Item{Key: txKey("t1"), Revision: 3, Value: []byte(`{"uuid":"t1","nodes":["1","2"],"failed_nodes":["1"],"draining":["2"]}`)}
	var first txRecord
	if err := s.decodeTx(it, &first); err != nil {
		t.Fatal(err)
	}
	first.FailedNodes = append(first.FailedNodes[:0], "9")
	first.Draining = slices.DeleteFunc(first.Draining, func(string) bool { return true })
	it.Value = []byte(`not read again: the revision is the same`)
	var second txRecord
	if err := s.decodeTx(it, &second); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(second.FailedNodes, []string{"1"}) || !slices.Equal(second.Draining, []string{"2"}) || !slices.Equal(second.Nodes, []string{"1", "2"}) {
		t.Fatalf("the second read: %+v", second)
	}
	it.Revision, it.Value = 4, []byte(`{"uuid":"t1","nodes":["1","2"],"failed_nodes":["1","2"]}`)
	if err := s.decodeTx(it, &second); err != nil || len(second.FailedNodes) != 2 || second.Draining != nil {
		t.Fatalf("the next revision: %+v, %v", second, err)
	}
}
