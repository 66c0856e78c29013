package wire

import (
	"encoding/json"
	"strconv"
	"strings"
)

// ID is an entity's identity as the API writes it: before microversion 1.2 the
// legacy integer id (a JSON number), from 1.2 on the UUID (a JSON string). In
// requests an ID may also be a name where the API takes one: an ID written
// with digits only goes out as a number, anything else as a string.
type ID string

// IntID is the ID of a legacy integer id.
func IntID(id int64) ID { return ID(strconv.FormatInt(id, 10)) }

// IDOf is the ID an answer shows at a microversion: the UUID when uuids (1.2
// on), the integer id before.
func IDOf(uuids bool, id int64, uuid string) ID {
	if uuids {
		return ID(uuid)
	}
	return IntID(id)
}

// UUIDBeside is the "uuid" field an answer shows beside "id": the UUID
// before 1.2, nothing (omitted) from 1.2 on, where "id" is the UUID.
func UUIDBeside(uuids bool, uuid string) string {
	if uuids {
		return ""
	}
	return uuid
}

// MarshalJSON writes an integer id as a number, a UUID or name as a string.
func (id ID) MarshalJSON() ([]byte, error) {
	if isInteger(string(id)) {
		return []byte(id), nil
	}
	return json.Marshal(string(id))
}

// UnmarshalJSON reads a number or a string.
func (id *ID) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*id = ID(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*id = ID(s)
	return nil
}

func isInteger(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
