package templates

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Mask is what a secret argument value is shown as.
const Mask = "******"

// secretKeyParts are the fragments that make an argument key look like a
// secret (after oslo.utils' mask_dict_password), compared case-insensitively.
var secretKeyParts = []string{
	"password", "passwd", "pswd", "passphrase", "admin_pass", "adminpass", "new_pass",
	"secret", "token", "credential", "private_key", "encryption_key", "encrypted_key",
	"auth_key", "fernetkey", "sslkey", "configdrive",
}

func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	return slices.ContainsFunc(secretKeyParts, func(part string) bool { return strings.Contains(k, part) })
}

// Masked returns a copy of t whose step arguments show Mask for the value of
// every key that looks like a password, at any depth.
func (t Template) Masked() Template {
	t.Steps = MaskSteps(t.Steps)
	return t
}

// MaskSteps returns a copy of steps whose arguments show Mask for the value of
// every key that looks like a password, at any depth.
func MaskSteps(steps []Step) []Step {
	out := slices.Clone(steps)
	for i := range out {
		out[i].Args = maskArgs(out[i].Args)
	}
	return out
}

func maskArgs(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	if !maskInPlace(v) {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// maskInPlace replaces the values of secret keys inside v (maps and slices
// are changed in place) and reports whether it replaced any.
func maskInPlace(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if isSecretKey(k) {
				x[k], changed = Mask, true
			} else if maskInPlace(val) {
				changed = true
			}
		}
	case []any:
		for _, val := range x {
			if maskInPlace(val) {
				changed = true
			}
		}
	}
	return changed
}
