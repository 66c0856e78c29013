package ident

import "testing"

func TestForms(t *testing.T) {
	tests := []struct {
		s             string
		uuid, integer bool
	}{
		{"0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c", true, false},
		{"0B1C9A5E-2F4D-4E8A-9C3B-7D6E5F4A3B2C", true, false},
		{"{0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c}", false, false},
		{"urn:uuid:0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c", false, false},
		{"0b1c9a5e2f4d4e8a9c3b7d6e5f4a3b2c", false, false},
		{"0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2g", false, false},
		{"7", false, true},
		{"9223372036854775807", false, true},
		{"12345678901234567890", false, false},
		{"", false, false},
		{"-1", false, false},
		{"node-7", false, false},
	}
	for _, tt := range tests {
		if got := IsUUID(tt.s); got != tt.uuid {
			t.Errorf("IsUUID(%q) = %v", tt.s, got)
		}
		if got := IsIntegerID(tt.s); got != tt.integer {
			t.Errorf("IsIntegerID(%q) = %v", tt.s, got)
		}
	}
}
