package client

import "github.com/tuningbox/tuningbox/shared/wire"

// ID is an entity's identity as the API writes it (wire.ID): before
// microversion 1.2 the legacy integer id (a JSON number), from 1.2 on the
// UUID (a JSON string). In requests an ID may also be a name where the API
// takes one: an ID written with digits only goes out as a number, anything
// else as a string.
type ID = wire.ID
