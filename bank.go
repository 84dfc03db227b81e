package certbank

import (
	"encoding/json"
	"fmt"
	"io"
)

// BankVersion is the version of the bank bundle format.
const BankVersion = 1

// Bank is the private bank bundle: what `certbank build` writes outside
// public/ and `certbank serve` reads. It holds every published question with
// its answer, so it must never be served as a static file.
type Bank struct {
	Version        int             `json:"version"`
	Generated      string          `json:"generated"` // build date, YYYY-MM-DD
	Site           Site            `json:"site"`
	Certifications []Certification `json:"certifications"`
	// Questions are the published questions (those that pass the quality
	// policy), sorted by certification then id.
	Questions []Question `json:"questions"`
	// Samples maps a certification slug to the ids of its free sample.
	Samples map[string][]string `json:"samples"`
}

// Certification returns the certification with the given slug.
func (b *Bank) Certification(slug string) (*Certification, bool) {
	for i := range b.Certifications {
		if b.Certifications[i].Slug == slug {
			return &b.Certifications[i], true
		}
	}
	return nil, false
}

// WriteBank writes b as JSON.
func WriteBank(w io.Writer, b *Bank) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(b)
}

// ReadBank reads a bank bundle written by WriteBank and checks its version.
func ReadBank(r io.Reader) (*Bank, error) {
	var b Bank
	dec := json.NewDecoder(r)
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("read bank bundle: %w", err)
	}
	if b.Version != BankVersion {
		return nil, fmt.Errorf("bank bundle version %d, want %d: rebuild it with this certbank", b.Version, BankVersion)
	}
	return &b, nil
}
