package nodes

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store"
)

// ImportOps returns the writes that register nodes, read from an environment
// export, in env, without writing anything: an import stages them with the
// rest of the environment. Each node keeps its id and UUID where this
// registry never had them, else it gets new ones; renamed maps each old id
// that changed to the new one (as level values: the ConfigDB stores a node's
// documents under its id). A node whose FQDN is registered here already is a
// conflict: the import moves an environment, it does not merge hosts.
func (s *Service) ImportOps(ctx context.Context, in []Node, env Environment) (ops []store.Op, renamed map[string]string, err error) {
	out := make([]Node, len(in))
	seen := make(map[string]bool)
	ids := make(map[int64]bool)
	var lookups []store.Key
	for i, n := range in {
		if n.FQDN, err = normalizeFQDN(n.FQDN); err != nil {
			return nil, nil, err
		}
		if seen[n.FQDN] || ids[n.ID] {
			return nil, nil, errs.Invalidf("the export holds node %s (id %d) twice", n.FQDN, n.ID)
		}
		seen[n.FQDN], ids[n.ID] = true, true
		if err := n.validate(); err != nil {
			return nil, nil, err
		}
		lookups = append(lookups, fqdnKey(n.FQDN))
		if keepable(n.ID) {
			lookups = append(lookups, recordKey(n.ID))
		}
		if ident.IsUUID(n.UUID) {
			lookups = append(lookups, uuidKey(n.UUID))
		}
		out[i] = n
	}
	// What is taken here, in batched reads: an import from afar (an
	// operator's machine to DynamoDB) pays a round trip per call.
	taken, err := s.existing(ctx, lookups)
	if err != nil {
		return nil, nil, err
	}
	// The ids that stay first: reserving the largest moves the counter past
	// each, so the new ids given afterwards are none of them.
	keep := make([]bool, len(out))
	var largestKept int64
	for i, n := range out {
		if taken[fqdnKey(n.FQDN)] {
			return nil, nil, errs.Conflictf("a node with fqdn %s is registered here already", n.FQDN)
		}
		if keep[i] = keepable(n.ID) && !taken[recordKey(n.ID)]; keep[i] {
			largestKept = max(largestKept, n.ID)
		}
	}
	if largestKept > 0 {
		if err := store.ReserveID(ctx, s.idx, counterKey, largestKept); err != nil {
			return nil, nil, fmt.Errorf("reserve node ids up to %d: %w", largestKept, err)
		}
	}
	renamed = make(map[string]string)
	for i := range out {
		n := &out[i]
		if old := n.ID; !keep[i] {
			if n.ID, err = store.NextID(ctx, s.idx, counterKey); err != nil {
				return nil, nil, fmt.Errorf("allocate node id: %w", err)
			}
			renamed[strconv.FormatInt(old, 10)] = strconv.FormatInt(n.ID, 10)
		}
		if !ident.IsUUID(n.UUID) || taken[uuidKey(n.UUID)] {
			n.UUID = uuid.NewString()
		}
		n.EnvironmentID, n.EnvironmentUUID = env.ID, env.UUID
		ptr := mustJSON(pointer{ID: n.ID})
		ops = append(ops,
			store.Create(recordKey(n.ID), mustJSON(n)),
			store.Create(uuidKey(n.UUID), ptr),
			store.Create(fqdnKey(n.FQDN), ptr),
			store.Create(envKey(n.EnvironmentID, n.ID), ptr),
		)
	}
	return ops, renamed, nil
}

// keepable says whether an imported node's id may be kept: one a client may choose.
func keepable(id int64) bool { return id >= 1 && id <= store.MaxChosenID }

// existing returns which of keys hold an item, reading them store.MaxBatchGet at a time.
func (s *Service) existing(ctx context.Context, keys []store.Key) (map[store.Key]bool, error) {
	out := make(map[store.Key]bool)
	for chunk := range slices.Chunk(keys, store.MaxBatchGet) {
		got, err := s.idx.BatchGet(ctx, chunk)
		if err != nil {
			return nil, err
		}
		for k := range got {
			out[k] = true
		}
	}
	return out, nil
}
