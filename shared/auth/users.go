package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

const (
	pUser  = "auth#user"
	pToken = "auth#token"
)

func userKey(name string) store.Key { return store.Key{Partition: pUser, Sort: name} }

// User is an account as the API shows it (never with its password hash).
type User struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Node is the node reference (id, UUID or FQDN) of a Node user.
	Node      string    `json:"node,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NewUser is what an administrator gives to create an account.
type NewUser struct {
	Name     string
	Password string
	Role     Role
	Node     string
}

type userRecord struct {
	Name         string    `json:"name"`
	Role         Role      `json:"role"`
	Node         string    `json:"node,omitempty"`
	PasswordHash []byte    `json:"password_hash"`
	CreatedAt    time.Time `json:"created_at"`
}

func (r userRecord) user() User {
	return User{Name: r.Name, Role: r.Role, Node: r.Node, CreatedAt: r.CreatedAt}
}

// MaxNameLen bounds user names. Passwords have MinPasswordLen to
// MaxPasswordLen bytes: bcrypt reads no more than 72, so a longer one would
// be accepted with its tail ignored.
const (
	MaxNameLen     = 64
	MinPasswordLen = 8
	MaxPasswordLen = 72
)

// CheckUserName accepts 1..64 characters of letters, digits and ". _ @ -":
// nothing that Basic auth (":"), paths ("/") or logs would mangle.
func CheckUserName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return errs.Invalidf("a user name has 1 to %d characters", MaxNameLen)
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '@' || c == '-'
		if !ok {
			return errs.Invalidf("user name %q may contain only letters, digits and . _ @ -", name)
		}
	}
	return nil
}

func (in NewUser) validate() error {
	if err := CheckUserName(in.Name); err != nil {
		return err
	}
	if len(in.Password) < MinPasswordLen || len(in.Password) > MaxPasswordLen {
		return errs.Invalidf("a password has %d to %d bytes", MinPasswordLen, MaxPasswordLen)
	}
	if !in.Role.Valid() {
		return errs.Invalidf("role %q is not one of admin, observer, node", in.Role)
	}
	if (in.Role == Node) != (in.Node != "") {
		return errs.Invalidf("a node reference goes with the node role, and only with it")
	}
	if len(in.Node) > 255 {
		return errs.Invalidf("node reference is longer than 255 characters")
	}
	return nil
}

// CreateUser creates an account; an existing name is errs.Conflict.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (User, error) {
	if err := in.validate(); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), s.bcryptCost)
	if err != nil {
		return User{}, fmt.Errorf("hash password: %w", err)
	}
	rec := userRecord{Name: in.Name, Role: in.Role, Node: in.Node, PasswordHash: hash, CreatedAt: s.now()}
	value, err := json.Marshal(rec)
	if err != nil {
		return User{}, err
	}
	err = s.idx.Write(ctx, store.Create(userKey(in.Name), value))
	if errors.Is(err, store.ErrConflict) {
		return User{}, errs.Conflictf("user %q already exists", in.Name)
	}
	if err != nil {
		return User{}, err
	}
	return rec.user(), nil
}

// EnsureUser creates the account unless a user of that name exists (whatever
// its role and password): the bootstrap of the first administrator.
func (s *Service) EnsureUser(ctx context.Context, in NewUser) (created bool, err error) {
	if err := in.validate(); err != nil {
		return false, err
	}
	_, err = s.user(ctx, in.Name)
	if err == nil {
		return false, nil
	}
	if !errs.Is(err, errs.NotFound) {
		return false, err
	}
	_, err = s.CreateUser(ctx, in)
	if errs.Is(err, errs.Conflict) {
		return false, nil // another process created it meanwhile
	}
	return err == nil, err
}

// GetUser returns one account.
func (s *Service) GetUser(ctx context.Context, name string) (User, error) {
	rec, err := s.user(ctx, name)
	return rec.user(), err
}

func (s *Service) user(ctx context.Context, name string) (userRecord, error) {
	if CheckUserName(name) != nil {
		return userRecord{}, errs.NotFoundf("user %q not found", name)
	}
	item, err := s.idx.Get(ctx, userKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return userRecord{}, errs.NotFoundf("user %q not found", name)
	}
	if err != nil {
		return userRecord{}, err
	}
	return decode[userRecord](item)
}

// ListUsers lists every account by name.
func (s *Service) ListUsers(ctx context.Context) ([]User, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: pUser})
	if err != nil {
		return nil, err
	}
	users := make([]User, 0, len(items))
	for _, it := range items {
		rec, err := decode[userRecord](it)
		if err != nil {
			return nil, err
		}
		users = append(users, rec.user())
	}
	return users, nil
}

// DeleteUser removes an account and revokes its tokens in one write.
func (s *Service) DeleteUser(ctx context.Context, name string) error {
	if _, err := s.user(ctx, name); err != nil {
		return err
	}
	tokens, err := s.tokenItems(ctx, name)
	if err != nil {
		return err
	}
	ops := []store.Op{store.Delete(userKey(name))}
	for _, t := range tokens {
		if len(ops) == store.MaxWriteBatch {
			// The rest stay behind as tokens of a missing user, which verification refuses.
			break
		}
		ops = append(ops, store.Delete(t.Key))
	}
	if err := s.idx.Write(ctx, ops...); err != nil {
		return err
	}
	s.forget()
	return nil
}
