package nodes

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
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
	keep := make([]bool, len(in))
	seen := make(map[string]bool)
	ids := make(map[int64]bool)
	// First the ids that stay: reserving them moves the counter past each,
	// so the new ids given afterwards are none of them.
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
		taken, err := s.exists(ctx, fqdnKey(n.FQDN))
		if err != nil {
			return nil, nil, err
		}
		if taken {
			return nil, nil, errs.Conflictf("a node with fqdn %s is registered here already", n.FQDN)
		}
		if taken, err = s.exists(ctx, recordKey(n.ID)); err != nil {
			return nil, nil, err
		}
		if keep[i] = !taken && n.ID >= 1 && n.ID <= store.MaxChosenID; keep[i] {
			if err := store.ReserveID(ctx, s.idx, counterKey, n.ID); err != nil {
				return nil, nil, fmt.Errorf("reserve node id %d: %w", n.ID, err)
			}
		}
		out[i] = n
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
		taken, err := s.exists(ctx, uuidKey(n.UUID))
		if err != nil {
			return nil, nil, err
		}
		if taken || n.UUID == "" {
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

// exists reports whether the item at k exists (a key no item can have: no).
func (s *Service) exists(ctx context.Context, k store.Key) (bool, error) {
	_, err := s.idx.Get(ctx, k)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidKey):
		return false, nil
	}
	return false, err
}
