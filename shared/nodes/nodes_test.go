package nodes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

func newService(t *testing.T) *nodes.Service {
	t.Helper()
	b := mem.New()
	return nodes.NewService(b.Index, nodestest.Environments{Count: 9})
}

func mustCreate(t *testing.T, s *nodes.Service, in nodes.NewNode) nodes.Node {
	t.Helper()
	n, err := s.Create(context.Background(), in)
	if err != nil {
		t.Fatalf("create %+v: %v", in, err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }

func TestCheckTrait(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", true},
		{"HW_CPU_X86_VMX", true},
		{"CUSTOM_" + strings.Repeat("A", 248), true},
		{"CUSTOM_" + strings.Repeat("A", 249), false},
		{"CUSTOM_", false},
		{"CUSTOM_lower", false},
		{"custom_x", false},
		{"HW-CPU", false},
		{"", false},
		{"_LEADING", false},
	} {
		err := nodes.CheckTrait(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("CheckTrait(%.20q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestCreateValidation(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	mustCreate(t, s, nodes.NewNode{FQDN: "taken.example.com", Environment: "1", UUID: "8221f906-208b-44a5-b575-f8e8a59c4a84", ID: 40})
	for _, tc := range []struct {
		name string
		in   nodes.NewNode
		kind errs.Kind
		msg  string
	}{
		{"empty fqdn", nodes.NewNode{Environment: "1"}, errs.Invalid, "fqdn"},
		{"bad label", nodes.NewNode{FQDN: "a_b.example.com", Environment: "1"}, errs.Invalid, "label"},
		{"numeric fqdn", nodes.NewNode{FQDN: "12", Environment: "1"}, errs.Invalid, "ambiguous"},
		{"uuid fqdn", nodes.NewNode{FQDN: "3fe90b52-1d67-4f03-9ed3-5fbf1a6fa1e1", Environment: "1"}, errs.Invalid, "ambiguous"},
		{"no environment", nodes.NewNode{FQDN: "n1"}, errs.Invalid, "environment_id is required"},
		{"unknown environment", nodes.NewNode{FQDN: "n1", Environment: "10"}, errs.Invalid, "environment_id 10: no such environment"},
		{"bad trait", nodes.NewNode{FQDN: "n1", Environment: "1", Traits: []string{"lower"}}, errs.Invalid, "trait"},
		{"duplicate trait", nodes.NewNode{FQDN: "n1", Environment: "1", Traits: []string{"CUSTOM_A", "CUSTOM_A"}}, errs.Invalid, "twice"},
		{"duplicate role", nodes.NewNode{FQDN: "n1", Environment: "1", Roles: []string{"compute", "compute"}}, errs.Invalid, "twice"},
		{"empty role", nodes.NewNode{FQDN: "n1", Environment: "1", Roles: []string{""}}, errs.Invalid, "role"},
		{"bad uuid", nodes.NewNode{FQDN: "n1", Environment: "1", UUID: "1234"}, errs.Invalid, "Invalid uuid 1234"},
		{"negative id", nodes.NewNode{FQDN: "n1", Environment: "1", ID: -3}, errs.Invalid, "from 1 to"},
		{"duplicate fqdn", nodes.NewNode{FQDN: "TAKEN.example.com.", Environment: "2"}, errs.Conflict, "fqdn taken.example.com"},
		{"duplicate uuid", nodes.NewNode{FQDN: "n1", Environment: "1", UUID: "8221F906-208B-44A5-B575-F8E8A59C4A84"}, errs.Conflict, "uuid"},
		{"duplicate id", nodes.NewNode{FQDN: "n1", Environment: "1", ID: 40}, errs.Conflict, "id 40"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Create(ctx, tc.in)
			if !errs.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want kind %v containing %q", err, tc.kind, tc.msg)
			}
		})
	}
}

func TestCreateAssignsIdentity(t *testing.T) {
	s := newService(t)
	a := mustCreate(t, s, nodes.NewNode{FQDN: "Node-1.Example.com", Environment: "1"})
	b := mustCreate(t, s, nodes.NewNode{FQDN: "node-2.example.com", Environment: "1", ID: 10})
	c := mustCreate(t, s, nodes.NewNode{FQDN: "node-3.example.com", Environment: "1"})
	if a.ID != 1 || b.ID != 10 || c.ID != 11 {
		t.Errorf("ids = %d, %d, %d; want 1, 10, 11", a.ID, b.ID, c.ID)
	}
	if !ident.IsUUID(a.UUID) || a.UUID == c.UUID {
		t.Errorf("uuids %q, %q", a.UUID, c.UUID)
	}
	if a.FQDN != "node-1.example.com" || a.Status != nodes.Enabled || a.Roles == nil || a.Traits == nil {
		t.Errorf("defaults not applied: %+v", a)
	}
}

func TestResolve(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	n := mustCreate(t, s, nodes.NewNode{FQDN: "node-1.example.com", Environment: "1"})
	for _, ref := range []string{n.UUID, strings.ToUpper(n.UUID), "1", "node-1.example.com", "NODE-1.example.com."} {
		got, err := s.Resolve(ctx, ref)
		if err != nil || got.UUID != n.UUID {
			t.Errorf("Resolve(%q) = %v, %v", ref, got.UUID, err)
		}
	}
	for _, ref := range []string{"2", "0", "99999999999999999999999", "8221f906-208b-44a5-b575-f8e8a59c4a84", "other.example.com"} {
		if _, err := s.Resolve(ctx, ref); !errs.Is(err, errs.NotFound) {
			t.Errorf("Resolve(%q) err = %v, want NotFound", ref, err)
		}
	}
}

func TestListPagingAndSearch(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	var all []nodes.Node
	for i := range 5 {
		all = append(all, mustCreate(t, s, nodes.NewNode{FQDN: fmt.Sprintf("node-%d.rack%d.example.com", i, i%2), Environment: fmt.Sprint(1 + i%2)}))
	}
	page, err := s.List(ctx, 2, "")
	if err != nil || len(page) != 2 || page[0].ID != 1 || page[1].ID != 2 {
		t.Fatalf("first page = %v, %v", page, err)
	}
	page, err = s.List(ctx, 2, page[1].UUID)
	if err != nil || len(page) != 2 || page[0].ID != 3 {
		t.Fatalf("second page = %v, %v", page, err)
	}
	page, err = s.List(ctx, 0, all[3].UUID)
	if err != nil || len(page) != 1 || page[0].ID != 5 {
		t.Fatalf("last page = %v, %v", page, err)
	}
	if _, err := s.List(ctx, 2, "8221f906-208b-44a5-b575-f8e8a59c4a84"); !errs.Is(err, errs.Invalid) {
		t.Errorf("unknown marker: %v, want Invalid", err)
	}

	for _, tc := range []struct {
		pattern string
		want    []int64
	}{
		{"rack1", []int64{2, 4}},
		{"NODE-3", []int64{4}},
		{"example", []int64{1, 2, 3, 4, 5}},
	} {
		got, err := s.Search(ctx, tc.pattern)
		if err != nil {
			t.Fatalf("Search(%q): %v", tc.pattern, err)
		}
		if ids := idsOf(got); fmt.Sprint(ids) != fmt.Sprint(tc.want) {
			t.Errorf("Search(%q) = %v, want %v", tc.pattern, ids, tc.want)
		}
	}
	if _, err := s.Search(ctx, "nowhere"); !errs.Is(err, errs.NotFound) {
		t.Errorf("no match: %v, want NotFound", err)
	}

	env2, err := s.InEnvironment(ctx, 2)
	if err != nil || fmt.Sprint(idsOf(env2)) != "[2 4]" {
		t.Errorf("InEnvironment(2) = %v, %v", idsOf(env2), err)
	}
	if none, err := s.InEnvironment(ctx, 9); err != nil || len(none) != 0 {
		t.Errorf("InEnvironment(9) = %v, %v", none, err)
	}
}

func idsOf(ns []nodes.Node) []int64 {
	ids := make([]int64, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	return ids
}

func TestUpdate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		disable bool // start from a node disabled with reason "old"
		u       nodes.Update
		check   func(nodes.Node) bool
		errKind errs.Kind
		errMsg  string
	}{
		{name: "empty body", u: nodes.Update{}, errKind: errs.Invalid, errMsg: "No updates were requested"},
		{name: "same status", u: nodes.Update{Status: ptr(nodes.Enabled)}, errKind: errs.Invalid, errMsg: "No updates were requested"},
		{name: "reason with enabled", u: nodes.Update{Status: ptr(nodes.Enabled), DisabledReason: ptr("why")}, errKind: errs.Invalid, errMsg: "'disabled_reason' with status 'enabled'"},
		{name: "reason on enabled node", u: nodes.Update{DisabledReason: ptr("why")}, errKind: errs.Invalid, errMsg: "disabled_reason"},
		{name: "bad status", u: nodes.Update{Status: ptr(nodes.Status("broken"))}, errKind: errs.Invalid, errMsg: "status"},
		{name: "disable", u: nodes.Update{Status: ptr(nodes.Disabled)},
			check: func(n nodes.Node) bool { return n.Status == nodes.Disabled && n.DisabledReason == "" }},
		{name: "disable with reason", u: nodes.Update{Status: ptr(nodes.Disabled), DisabledReason: ptr("disk")},
			check: func(n nodes.Node) bool { return n.Status == nodes.Disabled && n.DisabledReason == "disk" }},
		{name: "enable clears reason", disable: true, u: nodes.Update{Status: ptr(nodes.Enabled)},
			check: func(n nodes.Node) bool { return n.Status == nodes.Enabled && n.DisabledReason == "" }},
		{name: "new reason only", disable: true, u: nodes.Update{DisabledReason: ptr("fan")},
			check: func(n nodes.Node) bool { return n.Status == nodes.Disabled && n.DisabledReason == "fan" }},
		{name: "disable again drops reason", disable: true, u: nodes.Update{Status: ptr(nodes.Disabled)},
			check: func(n nodes.Node) bool { return n.DisabledReason == "" }},
		{name: "maintenance", u: nodes.Update{Maintenance: ptr(true)},
			check: func(n nodes.Node) bool { return n.Maintenance && n.UpdatedAt != nil }},
		{name: "roles and traits", u: nodes.Update{Roles: ptr([]string{"compute"}), Traits: ptr([]string{"CUSTOM_X"})},
			check: func(n nodes.Node) bool { return n.Roles[0] == "compute" && n.HasTrait("CUSTOM_X") }},
		{name: "bad trait", u: nodes.Update{Traits: ptr([]string{"x"})}, errKind: errs.Invalid, errMsg: "trait"},
		{name: "rename", u: nodes.Update{FQDN: ptr("renamed.example.com")},
			check: func(n nodes.Node) bool { return n.FQDN == "renamed.example.com" }},
		{name: "rename onto another node", u: nodes.Update{FQDN: ptr("other.example.com")}, errKind: errs.Conflict, errMsg: "other.example.com"},
		{name: "move environment", u: nodes.Update{Environment: ptr("7")},
			check: func(n nodes.Node) bool {
				return n.EnvironmentID == 7 && n.EnvironmentUUID == nodestest.EnvironmentUUID(7)
			}},
		{name: "bad environment", u: nodes.Update{Environment: ptr("0")}, errKind: errs.Invalid, errMsg: "environment_id 0: no such environment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newService(t)
			ctx := context.Background()
			n := mustCreate(t, s, nodes.NewNode{FQDN: "node.example.com", Environment: "1", Roles: []string{"controller"}})
			mustCreate(t, s, nodes.NewNode{FQDN: "other.example.com", Environment: "1"})
			if tc.disable {
				if _, err := s.Update(ctx, n.UUID, nodes.Update{Status: ptr(nodes.Disabled), DisabledReason: ptr("old")}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Update(ctx, n.UUID, tc.u)
			if tc.check == nil {
				if !errs.Is(err, tc.errKind) || !strings.Contains(err.Error(), tc.errMsg) {
					t.Fatalf("err = %v, want kind %v containing %q", err, tc.errKind, tc.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Fatalf("unexpected result %+v", got)
			}
			again, err := s.Resolve(ctx, n.UUID)
			if err != nil || !tc.check(again) {
				t.Fatalf("stored node %+v, %v", again, err)
			}
		})
	}
}

func TestUpdateMovesIndexes(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	n := mustCreate(t, s, nodes.NewNode{FQDN: "node.example.com", Environment: "1"})
	if _, err := s.Update(ctx, "node.example.com", nodes.Update{FQDN: ptr("moved.example.com"), Environment: ptr(nodestest.EnvironmentUUID(2))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, "node.example.com"); !errs.Is(err, errs.NotFound) {
		t.Errorf("old fqdn still resolves: %v", err)
	}
	if got, err := s.Resolve(ctx, "moved.example.com"); err != nil || got.ID != n.ID {
		t.Errorf("new fqdn: %v, %v", got, err)
	}
	if env1, _ := s.InEnvironment(ctx, 1); len(env1) != 0 {
		t.Errorf("environment 1 still lists %v", env1)
	}
	if env2, _ := s.InEnvironment(ctx, 2); len(env2) != 1 {
		t.Errorf("environment 2 lists %v", env2)
	}
	// The old name is free again.
	mustCreate(t, s, nodes.NewNode{FQDN: "node.example.com", Environment: "1"})
}

func TestDelete(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	n := mustCreate(t, s, nodes.NewNode{FQDN: "node.example.com", Environment: "1"})
	deleted, err := s.Delete(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if deleted.UUID != n.UUID || deleted.EnvironmentID != n.EnvironmentID {
		t.Errorf("Delete returned %+v, want the node %+v", deleted, n)
	}
	for _, ref := range []string{n.UUID, "1", n.FQDN} {
		if _, err := s.Resolve(ctx, ref); !errs.Is(err, errs.NotFound) {
			t.Errorf("Resolve(%q) after delete: %v", ref, err)
		}
	}
	if _, err := s.Delete(ctx, n.UUID); !errs.Is(err, errs.NotFound) {
		t.Errorf("second delete: %v", err)
	}
	again := mustCreate(t, s, nodes.NewNode{FQDN: "node.example.com", Environment: "1"})
	if again.ID != 2 {
		t.Errorf("id reused: %d", again.ID)
	}
}

func TestPlacementLevels(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	n := mustCreate(t, s, nodes.NewNode{FQDN: "node-1.example.com", Environment: "1", Levels: map[string]string{"role": "compute", "rack": "r1"}})
	if n.Levels["role"] != "compute" || n.Levels["rack"] != "r1" {
		t.Fatalf("levels %v", n.Levels)
	}
	if n2 := mustCreate(t, s, nodes.NewNode{FQDN: "node-2.example.com", Environment: "1"}); n2.Levels == nil || len(n2.Levels) != 0 {
		t.Fatalf("no levels: %#v, want an empty map", n2.Levels)
	}
	got, err := s.Update(ctx, n.UUID, nodes.Update{Levels: ptr(map[string]string{"role": "controller"})})
	if err != nil || len(got.Levels) != 1 || got.Levels["role"] != "controller" {
		t.Fatalf("update levels: %v %v", got.Levels, err)
	}
	if _, err := s.Update(ctx, n.UUID, nodes.Update{Levels: ptr(map[string]string{"role": "controller"})}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("same levels again: %v, want No updates were requested", err)
	}
	for _, bad := range []map[string]string{{"": "x"}, {"a/b": "x"}, {"role": ""}, {"role": ".."}, {"role": "a\nb"}, {"role": strings.Repeat("x", 256)}} {
		if _, err := s.Create(ctx, nodes.NewNode{FQDN: "node-3.example.com", Environment: "1", Levels: bad}); !errs.Is(err, errs.Invalid) {
			t.Errorf("levels %q: %v, want invalid", bad, err)
		}
	}
}
