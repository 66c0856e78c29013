// Package nodes is the registry of deployed machines: each node has a UUID (its
// identity), a legacy integer id, a unique FQDN, the environment it belongs to,
// roles, traits (which deploy templates it may run) and an enabled/disabled
// status with maintenance. It maps a node reference given as UUID, id or FQDN
// to the node, for the API, the CLI and the other domains.
package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Status says whether a node takes new deployments.
type Status string

const (
	Enabled  Status = "enabled"
	Disabled Status = "disabled"
)

// Node is one registered machine.
type Node struct {
	UUID string `json:"uuid"`
	ID   int64  `json:"id"`
	FQDN string `json:"fqdn"`
	// EnvironmentID and EnvironmentUUID identify the node's environment.
	EnvironmentID   int64    `json:"environment_id"`
	EnvironmentUUID string   `json:"environment_uuid"`
	Roles           []string `json:"roles"`
	Traits          []string `json:"traits"`
	// Levels is the node's placement in its environment's hierarchy: its value
	// for each ConfigDB level above the node level ({"role": "compute"}).
	Levels map[string]string `json:"levels"`
	// Interfaces lists the deploy steps the node supports, by driver
	// interface ({"raid": ["create_configuration"], "deploy": ["*"]}: "*"
	// is every step of the interface). An interface it does not name is not
	// supported; nil (the default) means everything is.
	Interfaces map[string][]string `json:"interfaces,omitempty"`
	Status     Status              `json:"status"`
	// DisabledReason is empty unless Status is Disabled.
	DisabledReason string     `json:"disabled_reason,omitempty"`
	Maintenance    bool       `json:"maintenance"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      *time.Time `json:"updated_at,omitempty"`
}

// HasTrait reports whether trait is one of the node's traits.
func (n Node) HasTrait(trait string) bool { return slices.Contains(n.Traits, trait) }

// NewNode is what a client gives to register a node. UUID and ID are chosen
// by the registry when zero.
type NewNode struct {
	UUID string
	ID   int64
	FQDN string
	// Environment is the environment's id or UUID.
	Environment string
	Roles       []string
	Traits      []string
	Levels      map[string]string
	Interfaces  map[string][]string
}

// Update is a partial update: nil fields stay as they are.
type Update struct {
	Status         *Status
	DisabledReason *string
	Maintenance    *bool
	Roles          *[]string
	Traits         *[]string
	// Levels replaces the whole placement.
	Levels *map[string]string
	// Interfaces replaces the supported deploy steps; a nil map: everything is supported.
	Interfaces *map[string][]string
	FQDN       *string
	// Environment is the new environment's id or UUID.
	Environment *string
}

// Environment is the identity of the environment a node belongs to.
type Environment struct {
	ID   int64
	UUID string
}

// Environments resolves an environment reference (an integer id or a UUID);
// an unknown environment is errs.NotFound. shared/app adapts the ConfigDB to it.
type Environments interface {
	Environment(ctx context.Context, ref string) (Environment, error)
}

// MaxPage is the largest page List returns.
const MaxPage = 1000

// Index layout, all under the "node#" prefix:
//
//	node#rec      / SortID(id)  -> Node (listing order is id order, i.e. creation order)
//	node#uuid     / uuid        -> {"id":N}
//	node#fqdn     / fqdn        -> {"id":N}
//	node#env#<E>  / SortID(id)  -> {"id":N}   (nodes of environment E)
//	node#counter  / id          -> id counter
const (
	partRecords = "node#rec"
	partUUID    = "node#uuid"
	partFQDN    = "node#fqdn"
)

var counterKey = store.Key{Partition: "node#counter", Sort: "id"}

func recordKey(id int64) store.Key { return store.Key{Partition: partRecords, Sort: store.SortID(id)} }

// RecordKey is the index item holding node id. The ConfigDB reads it in the
// same batch as a node's documents, to confirm a cached resolution for free.
func RecordKey(id int64) store.Key { return recordKey(id) }

// DecodeRecord decodes the value of a RecordKey item.
func DecodeRecord(value []byte) (Node, error) {
	var n Node
	err := json.Unmarshal(value, &n)
	return n, err
}
func uuidKey(u string) store.Key    { return store.Key{Partition: partUUID, Sort: strings.ToLower(u)} }
func fqdnKey(fqdn string) store.Key { return store.Key{Partition: partFQDN, Sort: fqdn} }
func envPartition(env int64) string { return "node#env#" + strconv.FormatInt(env, 10) }
func envKey(env, id int64) store.Key {
	return store.Key{Partition: envPartition(env), Sort: store.SortID(id)}
}

// pointer is the value of the uuid, fqdn and environment index items.
type pointer struct {
	ID int64 `json:"id"`
}

// Service is the node registry over an index.
type Service struct {
	idx  store.Index
	envs Environments
	now  func() time.Time
}

// NewService returns the registry over idx; envs resolves the environments nodes name.
func NewService(idx store.Index, envs Environments) *Service {
	return &Service{idx: idx, envs: envs, now: func() time.Time { return time.Now().UTC() }}
}

// Environment resolves an environment reference (id or UUID) as the registry does.
func (s *Service) Environment(ctx context.Context, ref string) (Environment, error) {
	return s.envs.Environment(ctx, ref)
}

// environmentOf resolves the environment a client names for a node: unknown is invalid input.
func (s *Service) environmentOf(ctx context.Context, ref string) (Environment, error) {
	if ref == "" {
		return Environment{}, errs.Invalidf("environment_id is required")
	}
	env, err := s.envs.Environment(ctx, ref)
	if errs.Is(err, errs.NotFound) {
		return Environment{}, errs.Wrap(errs.Invalid, err, fmt.Sprintf("environment_id %s: no such environment", ref))
	}
	if err != nil {
		return Environment{}, fmt.Errorf("resolve environment %s: %w", ref, err)
	}
	return env, nil
}

// Create registers a node. A duplicate FQDN, UUID or id is a conflict.
func (s *Service) Create(ctx context.Context, in NewNode) (Node, error) {
	fqdn, err := normalizeFQDN(in.FQDN)
	if err != nil {
		return Node{}, err
	}
	env, err := s.environmentOf(ctx, in.Environment)
	if err != nil {
		return Node{}, err
	}
	n := Node{
		UUID: strings.ToLower(in.UUID), ID: in.ID, FQDN: fqdn, EnvironmentID: env.ID, EnvironmentUUID: env.UUID,
		Roles: orEmpty(in.Roles), Traits: orEmpty(in.Traits), Levels: levelsOrEmpty(in.Levels), Interfaces: maps.Clone(in.Interfaces),
		Status: Enabled, CreatedAt: s.now(),
	}
	if err := n.validate(); err != nil {
		return Node{}, err
	}
	switch {
	case in.UUID == "":
		n.UUID = uuid.NewString()
	case !ident.IsUUID(in.UUID):
		return Node{}, errs.Invalidf("Invalid uuid %s", in.UUID)
	}
	if in.ID < 0 || in.ID > store.MaxChosenID {
		return Node{}, errs.Invalidf("node id must be an integer from 1 to %d (a node id of the deployment tool), got %d", store.MaxChosenID, in.ID)
	}
	if in.ID == 0 {
		if n.ID, err = store.NextID(ctx, s.idx, counterKey); err != nil {
			return Node{}, fmt.Errorf("allocate node id: %w", err)
		}
	} else if err := store.ReserveID(ctx, s.idx, counterKey, in.ID); err != nil {
		return Node{}, fmt.Errorf("reserve node id %d: %w", in.ID, err)
	}
	ptr := mustJSON(pointer{ID: n.ID})
	err = s.idx.Write(ctx,
		store.Create(recordKey(n.ID), mustJSON(n)),
		store.Create(uuidKey(n.UUID), ptr),
		store.Create(fqdnKey(n.FQDN), ptr),
		store.Create(envKey(n.EnvironmentID, n.ID), ptr),
	)
	if errors.Is(err, store.ErrConflict) {
		return Node{}, s.createConflict(ctx, n)
	}
	if err != nil {
		return Node{}, fmt.Errorf("create node %s: %w", n.FQDN, err)
	}
	return n, nil
}

// createConflict names what made the creation of n fail.
func (s *Service) createConflict(ctx context.Context, n Node) error {
	taken := []struct {
		key  store.Key
		what string
	}{
		{fqdnKey(n.FQDN), "fqdn " + n.FQDN},
		{uuidKey(n.UUID), "uuid " + n.UUID},
		{recordKey(n.ID), "id " + strconv.FormatInt(n.ID, 10)},
	}
	for _, t := range taken {
		if _, err := s.idx.Get(ctx, t.key); err == nil {
			return errs.Conflictf("a node with %s already exists", t.what)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return errs.Conflictf("node %s was created concurrently; retry", n.FQDN)
}

// validate checks the fields a client sets.
func (n Node) validate() error {
	if err := checkNames("role", n.Roles, checkRole); err != nil {
		return err
	}
	if err := checkNames("trait", n.Traits, CheckTrait); err != nil {
		return err
	}
	if err := checkPlacement(n.Levels); err != nil {
		return err
	}
	if err := checkInterfaces(n.Interfaces); err != nil {
		return err
	}
	switch n.Status {
	case Enabled:
		if n.DisabledReason != "" {
			return errs.Invalidf("disabled_reason is only valid with status %q", Disabled)
		}
	case Disabled:
	default:
		return errs.Invalidf("status must be %q or %q, got %q", Enabled, Disabled, n.Status)
	}
	return nil
}

// Resolve finds a node by reference: a UUID, a legacy integer id, or an FQDN.
// FQDNs can be neither all digits nor UUID-shaped, so a reference is never ambiguous.
func (s *Service) Resolve(ctx context.Context, ref string) (Node, error) {
	n, _, err := s.resolve(ctx, ref)
	return n, err
}

func (s *Service) resolve(ctx context.Context, ref string) (Node, int64, error) {
	var lookup store.Key
	switch {
	case ident.IsUUID(ref):
		lookup = uuidKey(ref)
	case allDigits.MatchString(ref):
		id, err := strconv.ParseInt(ref, 10, 64)
		if err != nil || id <= 0 {
			return Node{}, 0, errs.NotFoundf("node %s not found", ref)
		}
		return s.byID(ctx, id, ref)
	default:
		lookup = fqdnKey(strings.ToLower(strings.TrimSuffix(ref, ".")))
	}
	var p pointer
	if _, err := store.GetJSON(ctx, s.idx, lookup, &p); errors.Is(err, store.ErrNotFound) {
		return Node{}, 0, errs.NotFoundf("node %s not found", ref)
	} else if err != nil {
		return Node{}, 0, fmt.Errorf("look up node %s: %w", ref, err)
	}
	return s.byID(ctx, p.ID, ref)
}

func (s *Service) byID(ctx context.Context, id int64, ref string) (Node, int64, error) {
	var n Node
	rev, err := store.GetJSON(ctx, s.idx, recordKey(id), &n)
	if errors.Is(err, store.ErrNotFound) {
		return Node{}, 0, errs.NotFoundf("node %s not found", ref)
	}
	if err != nil {
		return Node{}, 0, fmt.Errorf("read node %d: %w", id, err)
	}
	return n, rev, nil
}

// List returns up to limit nodes (MaxPage when limit is 0 or larger) in
// creation order, starting after the node named by marker when it is set.
// An unknown marker is invalid input.
func (s *Service) List(ctx context.Context, limit int, marker string) ([]Node, error) {
	if limit < 0 {
		return nil, errs.Invalidf("limit must be positive, got %d", limit)
	}
	if limit == 0 || limit > MaxPage {
		limit = MaxPage
	}
	q := store.Query{Partition: partRecords, Limit: limit}
	if marker != "" {
		m, err := s.Resolve(ctx, marker)
		if errs.Is(err, errs.NotFound) {
			return nil, errs.Invalidf("marker %s not found", marker)
		}
		if err != nil {
			return nil, err
		}
		q.After = store.SortID(m.ID)
	}
	items, err := s.idx.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return decodeNodes(items)
}

// Search returns every node whose FQDN contains pattern (case-insensitive), in
// creation order; no match is NotFound.
func (s *Service) Search(ctx context.Context, pattern string) ([]Node, error) {
	if pattern == "" {
		return nil, errs.Invalidf("hostname pattern must not be empty")
	}
	items, err := s.idx.Query(ctx, store.Query{Partition: partRecords})
	if err != nil {
		return nil, fmt.Errorf("search nodes: %w", err)
	}
	all, err := decodeNodes(items)
	if err != nil {
		return nil, err
	}
	needle := strings.ToLower(pattern)
	matches := slices.DeleteFunc(all, func(n Node) bool { return !strings.Contains(n.FQDN, needle) })
	if len(matches) == 0 {
		return nil, errs.NotFoundf("no node matches hostname %q", pattern)
	}
	return matches, nil
}

// InEnvironment returns the nodes of environment env in creation order (none is not an error).
func (s *Service) InEnvironment(ctx context.Context, env int64) ([]Node, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: envPartition(env)})
	if err != nil {
		return nil, fmt.Errorf("list nodes of environment %d: %w", env, err)
	}
	out := make([]Node, 0, len(items))
	for chunk := range slices.Chunk(items, 100) {
		keys := make([]store.Key, len(chunk))
		for i, it := range chunk {
			id, err := store.ParseSortID(it.Sort)
			if err != nil {
				return nil, fmt.Errorf("environment index item %q: %w", it.Sort, err)
			}
			keys[i] = recordKey(id)
		}
		got, err := s.idx.BatchGet(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("read nodes of environment %d: %w", env, err)
		}
		for _, k := range keys {
			// A node deleted between the query and the read is simply gone.
			if it, ok := got[k]; ok {
				var n Node
				if err := json.Unmarshal(it.Value, &n); err != nil {
					return nil, fmt.Errorf("decode node %s: %w", k.Sort, err)
				}
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// Update applies u to the node named by ref and returns the updated node.
// Status rules follow Nova's PUT os-services: enabling clears the reason, a
// reason given with (or left on) an enabled node is invalid, and an update
// that changes nothing is invalid ("No updates were requested").
func (s *Service) Update(ctx context.Context, ref string, u Update) (Node, error) {
	var n Node
	err := store.RetryConflicts(ctx, "update node "+ref, func() error {
		old, rev, err := s.resolve(ctx, ref)
		if err != nil {
			return err
		}
		if n, err = s.apply(ctx, old, u); err != nil {
			return err
		}
		ops := []store.Op{store.Update(recordKey(n.ID), mustJSON(n), rev)}
		ptr := mustJSON(pointer{ID: n.ID})
		if n.FQDN != old.FQDN {
			ops = append(ops, store.Delete(fqdnKey(old.FQDN)), store.Create(fqdnKey(n.FQDN), ptr))
		}
		if n.EnvironmentID != old.EnvironmentID {
			ops = append(ops, store.Delete(envKey(old.EnvironmentID, n.ID)), store.Create(envKey(n.EnvironmentID, n.ID), ptr))
		}
		err = s.idx.Write(ctx, ops...)
		if errors.Is(err, store.ErrConflict) && n.FQDN != old.FQDN {
			if _, err := s.idx.Get(ctx, fqdnKey(n.FQDN)); err == nil {
				return errs.Conflictf("a node with fqdn %s already exists", n.FQDN)
			}
		}
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("update node %s: %w", old.FQDN, err)
		}
		return err // a conflict: the node changed under us; read it again and re-apply
	})
	if err != nil {
		return Node{}, err
	}
	return n, nil
}

// apply returns old with u applied, validated.
func (s *Service) apply(ctx context.Context, old Node, u Update) (Node, error) {
	n := old
	n.Roles, n.Traits, n.Levels = slices.Clone(old.Roles), slices.Clone(old.Traits), maps.Clone(old.Levels)
	if u.Status != nil {
		n.Status = *u.Status
		n.DisabledReason = "" // a new status replaces the old reason
	}
	if u.DisabledReason != nil {
		n.DisabledReason = *u.DisabledReason
	}
	if u.Maintenance != nil {
		n.Maintenance = *u.Maintenance
	}
	if u.Roles != nil {
		n.Roles = orEmpty(*u.Roles)
	}
	if u.Traits != nil {
		n.Traits = orEmpty(*u.Traits)
	}
	if u.Levels != nil {
		n.Levels = levelsOrEmpty(*u.Levels)
	}
	if u.Interfaces != nil {
		n.Interfaces = maps.Clone(*u.Interfaces)
	}
	if u.FQDN != nil {
		fqdn, err := normalizeFQDN(*u.FQDN)
		if err != nil {
			return Node{}, err
		}
		n.FQDN = fqdn
	}
	if u.Environment != nil {
		env, err := s.environmentOf(ctx, *u.Environment)
		if err != nil {
			return Node{}, err
		}
		n.EnvironmentID, n.EnvironmentUUID = env.ID, env.UUID
	}
	if n.Status == Enabled && u.DisabledReason != nil && *u.DisabledReason != "" {
		return Node{}, errs.Invalidf("Specifying 'disabled_reason' with status 'enabled' is invalid.")
	}
	if err := n.validate(); err != nil {
		return Node{}, err
	}
	if n.sameAs(old) {
		return Node{}, errs.Invalidf("No updates were requested")
	}
	now := s.now()
	n.UpdatedAt = &now
	return n, nil
}

// sameAs compares the client-settable fields.
func (n Node) sameAs(o Node) bool {
	return n.FQDN == o.FQDN && n.EnvironmentID == o.EnvironmentID && n.Status == o.Status &&
		n.DisabledReason == o.DisabledReason && n.Maintenance == o.Maintenance &&
		slices.Equal(n.Roles, o.Roles) && slices.Equal(n.Traits, o.Traits) && maps.Equal(n.Levels, o.Levels) &&
		(n.Interfaces == nil) == (o.Interfaces == nil) && maps.EqualFunc(n.Interfaces, o.Interfaces, slices.Equal)
}

// Supports reports whether the node supports step of driver interface iface.
func (n Node) Supports(iface, step string) bool {
	if n.Interfaces == nil {
		return true
	}
	steps, ok := n.Interfaces[iface]
	return ok && (slices.Contains(steps, AllSteps) || slices.Contains(steps, step))
}

// Delete removes the node named by ref and returns it as it was (its
// environment is what the write was under). Its legacy id is never handed out again.
func (s *Service) Delete(ctx context.Context, ref string) (Node, error) {
	var deleted Node
	err := store.RetryConflicts(ctx, "delete node "+ref, func() error {
		n, rev, err := s.resolve(ctx, ref)
		if err != nil {
			return err
		}
		err = s.idx.Write(ctx,
			store.DeleteAt(recordKey(n.ID), rev),
			store.Delete(uuidKey(n.UUID)),
			store.Delete(fqdnKey(n.FQDN)),
			store.Delete(envKey(n.EnvironmentID, n.ID)),
		)
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("delete node %s: %w", n.FQDN, err)
		}
		deleted = n
		return err
	})
	if err != nil {
		return Node{}, err
	}
	return deleted, nil
}

func decodeNodes(items []store.Item) ([]Node, error) {
	out := make([]Node, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it.Value, &out[i]); err != nil {
			return nil, fmt.Errorf("decode node %s: %w", it.Sort, err)
		}
	}
	return out, nil
}

func levelsOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with plain structs
	}
	return b
}
