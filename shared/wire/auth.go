package wire

import "time"

// User is an account (never its password).
type User struct {
	Name string `json:"name"`
	Role string `json:"role" enum:"admin,observer,node"`
	// Node is the node reference (id, UUID or FQDN) of a user of role node.
	Node      string    `json:"node,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NewUser creates an account. Node is the node (id, UUID or FQDN; from 1.2
// on a UUID or FQDN) of a user of role node.
type NewUser struct {
	Name     string `json:"name"`
	Password string `json:"password"`
	Role     string `json:"role" enum:"admin,observer,node"`
	Node     string `json:"node,omitempty"`
}

// UserBody is the answer of a user's create and show: {"user": ...}.
type UserBody struct {
	User User `json:"user"`
}

// UserList is the answer of the user listing.
type UserList struct {
	Users []User `json:"users"`
}

// Token is an API token (never its secret).
type Token struct {
	ID          string    `json:"id"`
	User        string    `json:"user"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// ExpiresAt ends a console session's token; API tokens have none.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Session is a console session: a token of the caller's that expires, and
// who the caller is, so that the console shows what the caller may see.
type Session struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	User      string    `json:"user"`
	Role      string    `json:"role" enum:"admin,observer,node"`
	// NodeNames are a node user's node's names (id, FQDN and UUID as far as the registry knows them).
	NodeNames []string `json:"node_names,omitempty"`
}

// NewToken issues a token for User ("": the caller).
type NewToken struct {
	User        string `json:"user,omitempty"`
	Description string `json:"description,omitempty"`
}

// CreatedToken is a new token and its secret, which the API shows only this once.
type CreatedToken struct {
	Token  Token  `json:"token"`
	Secret string `json:"secret"`
}

// TokenList is the answer of the token listing.
type TokenList struct {
	Tokens []Token `json:"tokens"`
}

// AuditRecord is one request of the audit log.
type AuditRecord struct {
	// ID orders records by time; it is also the paging cursor.
	ID        string    `json:"id"`
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Role      string    `json:"role"`
	// TokenID is the API token used, empty for a password login.
	TokenID string `json:"token_id,omitempty"`
	// RequestID names the request; a document version it created names it too.
	RequestID string `json:"request_id,omitempty"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	// Environment is the environment id the write was under, if any.
	Environment string `json:"environment,omitempty"`
	// Version is the document version the write created, when it created one.
	Version int `json:"version,omitempty"`
}

// AuditPage is a page of the audit log, newest first; Next is the cursor
// of the following page (?before=), absent on the last.
type AuditPage struct {
	Records []AuditRecord `json:"records"`
	Next    string        `json:"next,omitempty"`
}
