package x402

import (
	"errors"

	"github.com/certbank/certbank"
)

// Reason strings. They are the reasons of the current official x402 EVM
// implementation (@x402/evm 2.x and the Go SDK's exact/EVM facilitator), the
// family that uses invalid_exact_evm_signature rather than the older
// invalid_exact_evm_payload_signature. We use this one family in both
// protocol versions: a version 1 value mismatch is also reported as
// ReasonValueMismatch, and a low balance as ReasonInsufficientBalance (not
// the core spec's insufficient_funds). Clients treat reasons as opaque
// strings; the Message of an Error says what to do.
const (
	// ReasonInvalidPayload: the payment header is not a well-formed x402
	// payment (base64, JSON, field types, sizes).
	ReasonInvalidPayload = "invalid_payload"
	// ReasonInvalidVersion: x402Version is not the one the header carries.
	ReasonInvalidVersion = "invalid_x402_version"
	// ReasonInvalidRequirements: the requirement is unusable, or a version 2
	// payment accepted a requirement (asset, timeout) that we did not offer.
	ReasonInvalidRequirements = "invalid_payment_requirements"
	// ReasonScheme: the scheme is not "exact".
	ReasonScheme = "invalid_exact_evm_scheme"
	// ReasonNetworkMismatch: the payment is for another network.
	ReasonNetworkMismatch = "invalid_exact_evm_network_mismatch"
	// ReasonMissingDomain: a version 2 payment accepted a requirement without
	// extra.name and extra.version.
	ReasonMissingDomain = "invalid_exact_evm_missing_eip712_domain"
	// ReasonTokenNameMismatch: extra.name differs from the token's name.
	ReasonTokenNameMismatch = "invalid_exact_evm_token_name_mismatch"
	// ReasonTokenVersionMismatch: extra.version differs from the token's.
	ReasonTokenVersionMismatch = "invalid_exact_evm_token_version_mismatch"
	// ReasonSignature: the signature is malformed, malleable (high s), not
	// by the payer, or not an EOA signature.
	ReasonSignature = "invalid_exact_evm_signature"
	// ReasonRecipientMismatch: the authorization pays someone else.
	ReasonRecipientMismatch = "invalid_exact_evm_recipient_mismatch"
	// ReasonValidBefore: the authorization has expired or expires too soon.
	ReasonValidBefore = "invalid_exact_evm_payload_authorization_valid_before"
	// ReasonValidAfter: the authorization is not valid yet.
	ReasonValidAfter = "invalid_exact_evm_payload_authorization_valid_after"
	// ReasonValueMismatch: the authorized value is not exactly the price.
	ReasonValueMismatch = "invalid_exact_evm_payload_authorization_value_mismatch"
	// ReasonNonceUsed: the authorization was already used or canceled.
	ReasonNonceUsed = "invalid_exact_evm_nonce_already_used"
	// ReasonInsufficientBalance: the payer holds less than the price.
	ReasonInsufficientBalance = "invalid_exact_evm_insufficient_balance"
	// ReasonTransactionFailed: the token refused the transfer at settlement
	// (the transaction reverted, or would have); nothing was charged.
	ReasonTransactionFailed = "invalid_exact_evm_transaction_failed"
	// ReasonTransferEventMismatch: the transaction succeeded but did not log
	// the expected Transfer.
	ReasonTransferEventMismatch = "invalid_exact_evm_transfer_event_mismatch"
	// ReasonSettlementPending: the settlement was broadcast but not
	// confirmed in time; it must be reconciled, never paid again.
	ReasonSettlementPending = "settlement_pending"
	// ReasonUnexpectedVerify: verification could not finish (chain or
	// facilitator unreachable).
	ReasonUnexpectedVerify = "unexpected_verify_error"
	// ReasonUnexpectedSettle: settlement could not finish before anything
	// was broadcast (chain or facilitator unreachable).
	ReasonUnexpectedSettle = "unexpected_settle_error"
)

// Error is a failed payment step. Reason is the official reason string to
// put on the wire (see the Reason constants); Message says, in words safe to
// show the payer, what went wrong and what to do; Err is the internal cause,
// if any, for logs only.
//
// An Error unwraps to a *certbank.Error too, so certbank.ErrorCode and
// certbank.ErrorMessage work on it (see Code).
type Error struct {
	Reason  string
	Message string
	Err     error
}

// Error returns the reason, the message and the cause, for logs. Show
// clients only Reason and Message.
func (e *Error) Error() string {
	s := e.Reason + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause, if any, and the certbank.Error equivalent.
func (e *Error) Unwrap() []error {
	domain := &certbank.Error{Code: e.Code(), Message: e.Message}
	if e.Err == nil {
		return []error{domain}
	}
	return []error{e.Err, domain}
}

// Code is the certbank error kind of e: Unavailable when a chain or
// facilitator could not be reached or a settlement is still pending (retry
// the same payment later; do not sign a new one), PaymentRequired otherwise.
func (e *Error) Code() certbank.Code {
	switch e.Reason {
	case ReasonUnexpectedVerify, ReasonUnexpectedSettle, ReasonSettlementPending:
		return certbank.Unavailable
	}
	return certbank.PaymentRequired
}

// ReasonOf returns the Reason of the first *Error in err's chain, or "" if
// there is none.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func newError(reason, message string) *Error {
	return &Error{Reason: reason, Message: message}
}

func wrapError(reason, message string, err error) *Error {
	return &Error{Reason: reason, Message: message, Err: err}
}
