package paywall

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"net/http"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// KeyPrefix starts every API key, so a leaked key is recognisable.
const KeyPrefix = "cb_live_"

const keyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIKey returns a fresh random key (KeyPrefix + 32 base62 characters,
// about 190 bits), its hash and its display prefix.
func NewAPIKey() (key, hash, prefix string) {
	var b strings.Builder
	b.WriteString(KeyPrefix)
	n := big.NewInt(int64(len(keyAlphabet)))
	for i := 0; i < 32; i++ {
		x, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b.WriteByte(keyAlphabet[x.Int64()])
	}
	key = b.String()
	return key, HashKey(key), key[:len(KeyPrefix)+4]
}

// NewKeyID returns a fresh key identifier.
func NewKeyID() string {
	var b [8]byte
	rand.Read(b[:])
	return "key_" + hex.EncodeToString(b[:])
}

// HashKey returns the stored form of a key: lowercase hex SHA-256. Keys are
// long random strings, so a fast hash is enough.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// validKeyShape reports whether s looks like a key, before any lookup.
func validKeyShape(s string) bool {
	if !strings.HasPrefix(s, KeyPrefix) || len(s) != len(KeyPrefix)+32 {
		return false
	}
	for _, c := range s[len(KeyPrefix):] {
		if !strings.ContainsRune(keyAlphabet, c) {
			return false
		}
	}
	return true
}

// errUnauthorized is the one answer for every bad key: missing, malformed,
// unknown or revoked look the same, so the API is no oracle.
var errUnauthorized = certbank.Errorf(certbank.Unauthorized,
	"a valid API key is required in the x-api-key header; get one with POST /api/v1/signup")

// authenticate returns the key of the request's x-api-key header.
func (s *Server) authenticate(ctx context.Context, r *http.Request) (store.Key, error) {
	raw := strings.TrimSpace(r.Header.Get("x-api-key"))
	if !validKeyShape(raw) {
		return store.Key{}, errUnauthorized
	}
	return s.lookupKey(ctx, raw)
}

func (s *Server) lookupKey(ctx context.Context, raw string) (store.Key, error) {
	hash := HashKey(raw)
	now := s.now()
	k, ok := s.keys.get(hash, now)
	if !ok {
		var err error
		k, err = s.store.KeyByHash(ctx, hash)
		switch certbank.ErrorCode(err) {
		case "":
		case certbank.NotFound:
			return store.Key{}, errUnauthorized
		default:
			return store.Key{}, err
		}
		s.keys.put(hash, k, now)
	}
	if !k.Active() {
		return store.Key{}, errUnauthorized
	}
	return k, nil
}
