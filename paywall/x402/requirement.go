package x402

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/certbank/certbank"
)

// SchemeExact is the only payment scheme supported: pay exactly the price
// with an EIP-3009 authorization.
const SchemeExact = "exact"

// DefaultMimeType is sent as mimeType when a Requirement leaves it empty; the
// official version 1 client rejects requirements without one.
const DefaultMimeType = "application/json"

// Requirement is what one paid resource costs and who is paid: our own side
// of a payment, against which every incoming payment is checked.
type Requirement struct {
	// Network is a name LookupNetwork accepts: "base", "base-mainnet",
	// "eip155:8453", "base-sepolia", ...
	Network string
	// PayTo is the 0x address that receives the money.
	PayTo string
	// Amount is the exact price.
	Amount certbank.USDC
	// Resource is the absolute URL of the resource, query string included.
	Resource string
	// Description says what is being bought; it may be empty.
	Description string
	// MimeType is the media type of the paid response; empty means
	// DefaultMimeType.
	MimeType string
	// MaxTimeoutSeconds is how long a payment stays valid; clients set
	// validBefore to now plus this. Keep it at 60 or more.
	MaxTimeoutSeconds int
}

// Validate reports the first problem that would make r unusable: unknown
// network, bad payee address, non-positive amount or timeout, or a resource
// that is not an absolute http(s) URL. The error is a certbank Invalid error.
func (r Requirement) Validate() error {
	if _, ok := LookupNetwork(r.Network); !ok {
		return certbank.Errorf(certbank.Invalid, "payment network %q is not supported; use base or base-sepolia", r.Network)
	}
	if !isHexAddress(r.PayTo) || isZeroAddress(r.PayTo) {
		return certbank.Errorf(certbank.Invalid, "pay-to address %q is not a 0x-prefixed 20-byte hex address", r.PayTo)
	}
	if r.Amount <= 0 {
		return certbank.Errorf(certbank.Invalid, "price %s USDC must be positive", r.Amount)
	}
	if r.MaxTimeoutSeconds <= 0 {
		return certbank.Errorf(certbank.Invalid, "maxTimeoutSeconds %d must be positive", r.MaxTimeoutSeconds)
	}
	u, err := url.Parse(r.Resource)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return certbank.Errorf(certbank.Invalid, "resource %q is not an absolute http(s) URL", r.Resource)
	}
	return nil
}

// network returns r's network; an unknown name gives a Network with only
// Name set, so that rendering never fails (Validate reports it).
func (r Requirement) network() Network {
	if n, ok := LookupNetwork(r.Network); ok {
		return n
	}
	return Network{Name: r.Network, CAIP2: r.Network}
}

func (r Requirement) mimeType() string {
	if r.MimeType == "" {
		return DefaultMimeType
	}
	return r.MimeType
}

// eip712Extra is the extra object of an EVM exact requirement.
type eip712Extra struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// v1Requirement is one entry of a version 1 accepts array. outputSchema is
// left out on purpose: the official v1 client rejects a null one.
type v1Requirement struct {
	Scheme            string       `json:"scheme"`
	Network           string       `json:"network"`
	MaxAmountRequired string       `json:"maxAmountRequired"`
	Resource          string       `json:"resource"`
	Description       string       `json:"description"`
	MimeType          string       `json:"mimeType"`
	PayTo             string       `json:"payTo"`
	MaxTimeoutSeconds int          `json:"maxTimeoutSeconds"`
	Asset             string       `json:"asset"`
	Extra             *eip712Extra `json:"extra,omitempty"`
}

// v1PaymentRequired is the version 1 402 body.
type v1PaymentRequired struct {
	X402Version int             `json:"x402Version"`
	Error       string          `json:"error"`
	Accepts     []v1Requirement `json:"accepts"`
}

// v2Requirement is one entry of a version 2 accepts array.
type v2Requirement struct {
	Scheme            string       `json:"scheme"`
	Network           string       `json:"network"`
	Amount            string       `json:"amount"`
	Asset             string       `json:"asset"`
	PayTo             string       `json:"payTo"`
	MaxTimeoutSeconds int          `json:"maxTimeoutSeconds"`
	Extra             *eip712Extra `json:"extra,omitempty"`
}

// v2Resource describes the paid resource in a version 2 PaymentRequired.
type v2Resource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// v2PaymentRequired is the JSON inside the PAYMENT-REQUIRED header.
type v2PaymentRequired struct {
	X402Version int             `json:"x402Version"`
	Error       string          `json:"error,omitempty"`
	Resource    v2Resource      `json:"resource"`
	Accepts     []v2Requirement `json:"accepts"`
}

func (r Requirement) v1() v1Requirement {
	n := r.network()
	return v1Requirement{
		Scheme:            SchemeExact,
		Network:           n.Name,
		MaxAmountRequired: r.Amount.Atomic(),
		Resource:          r.Resource,
		Description:       r.Description,
		MimeType:          r.mimeType(),
		PayTo:             checksumAddress(r.PayTo),
		MaxTimeoutSeconds: r.MaxTimeoutSeconds,
		Asset:             n.Asset,
		Extra:             &eip712Extra{Name: n.TokenName, Version: n.TokenVersion},
	}
}

func (r Requirement) v2() v2Requirement {
	n := r.network()
	return v2Requirement{
		Scheme:            SchemeExact,
		Network:           n.CAIP2,
		Amount:            r.Amount.Atomic(),
		Asset:             n.Asset,
		PayTo:             checksumAddress(r.PayTo),
		MaxTimeoutSeconds: r.MaxTimeoutSeconds,
		Extra:             &eip712Extra{Name: n.TokenName, Version: n.TokenVersion},
	}
}

// V1Body returns the version 1 402 body (a PaymentRequirementsResponse):
// x402Version 1, errMsg as error, and r as the single accepts entry with the
// version 1 network name ("base", never an alias), maxAmountRequired in
// atomic units, mimeType always set, no outputSchema, and extra holding the
// token's EIP-712 name and version.
func (r Requirement) V1Body(errMsg string) []byte {
	b, err := json.Marshal(v1PaymentRequired{X402Version: 1, Error: errMsg, Accepts: []v1Requirement{r.v1()}})
	if err != nil {
		panic(fmt.Sprintf("x402: marshal v1 requirements: %v", err)) // plain strings and ints cannot fail
	}
	return b
}

// V2Header returns the value of the version 2 PAYMENT-REQUIRED header: the
// standard base64 of a PaymentRequired with x402Version 2, errMsg as error
// (left out when empty), the resource (url, description, mimeType) and r as
// the single accepts entry with the CAIP-2 network id.
func (r Requirement) V2Header(errMsg string) string {
	b, err := json.Marshal(v2PaymentRequired{
		X402Version: 2,
		Error:       errMsg,
		Resource:    v2Resource{URL: r.Resource, Description: r.Description, MimeType: r.mimeType()},
		Accepts:     []v2Requirement{r.v2()},
	})
	if err != nil {
		panic(fmt.Sprintf("x402: marshal v2 requirements: %v", err)) // plain strings and ints cannot fail
	}
	return base64.StdEncoding.EncodeToString(b)
}
