package generator

import "testing"

func TestHubTitle(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"Certified Information Systems Security Professional (CISSP)", "CISSP", "Certified Information Systems Security Professional (CISSP) practice questions"},
		{"VendorFour Security+", "SY0-701", "VendorFour Security+ (SY0-701) practice questions"},
		{"CloudThree Cloud Digital Leader", "", "CloudThree Cloud Digital Leader practice questions"},
	}
	for _, c := range cases {
		if got := hubTitle(c.name, c.code); got != c.want {
			t.Errorf("hubTitle(%q, %q) = %q, want %q", c.name, c.code, got, c.want)
		}
	}
}
