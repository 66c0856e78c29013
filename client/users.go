package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tuningbox/tuningbox/shared/wire"
)

const (
	usersPath  = "/api/v1/users"
	tokensPath = "/api/v1/tokens"
)

// The user and token bodies (shared/wire): User is an account, Token an API
// token (never its secret), CreatedToken a new token with its secret, which
// the server shows only this once. NewUser's Node is the node (id, UUID or
// FQDN) of a user of role node.
type (
	User         = wire.User
	Token        = wire.Token
	NewUser      = wire.NewUser
	CreatedToken = wire.CreatedToken
)

// Users lists the accounts.
func (c *Client) Users(ctx context.Context) ([]User, error) {
	var out wire.UserList
	_, err := c.call(ctx, http.MethodGet, usersPath, nil, nil, &out)
	return out.Users, err
}

// User reads an account.
func (c *Client) User(ctx context.Context, name string) (*User, error) {
	var out wire.UserBody
	_, err := c.call(ctx, http.MethodGet, usersPath+"/"+esc(name), nil, nil, &out)
	return &out.User, err
}

// CreateUser creates an account.
func (c *Client) CreateUser(ctx context.Context, in NewUser) (*User, error) {
	var out wire.UserBody
	_, err := c.call(ctx, http.MethodPost, usersPath, nil, in, &out)
	return &out.User, err
}

// DeleteUser deletes an account and revokes its tokens.
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, usersPath+"/"+esc(name), nil, nil, nil)
	return err
}

// Tokens lists tokens: a user's, or ("") every token the caller may see.
func (c *Client) Tokens(ctx context.Context, user string) ([]Token, error) {
	var q url.Values
	if user != "" {
		q = url.Values{"user": {user}}
	}
	var out wire.TokenList
	_, err := c.call(ctx, http.MethodGet, tokensPath, q, nil, &out)
	return out.Tokens, err
}

// CreateToken creates a token for user ("": the caller).
func (c *Client) CreateToken(ctx context.Context, user, description string) (*CreatedToken, error) {
	var out CreatedToken
	_, err := c.call(ctx, http.MethodPost, tokensPath, nil, wire.NewToken{User: user, Description: description}, &out)
	return &out, err
}

// RevokeToken revokes a token by id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, tokensPath+"/"+esc(id), nil, nil, nil)
	return err
}
