package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

func testKeyCreateAndLookup(t *testing.T, s store.Store) {
	ctx := t.Context()
	want := newKey(1)
	want.Tier = "pro"
	want.TierUntil = at(30 * 24 * time.Hour)
	must(t, "CreateKey", s.CreateKey(ctx, want))

	got, err := s.KeyByHash(ctx, want.Hash)
	must(t, "KeyByHash", err)
	if d := keyDiff(got, want); d != "" {
		t.Errorf("KeyByHash: %s", d)
	}
	if !got.Active() {
		t.Errorf("KeyByHash: new key is not active")
	}
	got, err = s.KeyByID(ctx, want.ID)
	must(t, "KeyByID", err)
	if d := keyDiff(got, want); d != "" {
		t.Errorf("KeyByID: %s", d)
	}
}

func testKeyLookupNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	must(t, "CreateKey", s.CreateKey(ctx, newKey(1)))
	_, err := s.KeyByHash(ctx, newKey(2).Hash)
	wantKind(t, "KeyByHash(unknown)", err, certbank.NotFound)
	_, err = s.KeyByID(ctx, newKey(2).ID)
	wantKind(t, "KeyByID(unknown)", err, certbank.NotFound)
	_, err = s.KeyByHash(ctx, "")
	wantKind(t, "KeyByHash(\"\")", err, certbank.NotFound)
}

func testKeyListNewestFirst(t *testing.T, s store.Store) {
	ctx := t.Context()
	keys, err := s.Keys(ctx)
	must(t, "Keys(empty)", err)
	if len(keys) != 0 {
		t.Fatalf("Keys(empty) = %d keys, want 0", len(keys))
	}
	// Insert out of creation order; one of them revoked (still listed).
	for _, n := range []int{2, 4, 1, 3} {
		must(t, "CreateKey", s.CreateKey(ctx, newKey(n)))
	}
	must(t, "RevokeKey", s.RevokeKey(ctx, newKey(3).ID, at(time.Hour)))
	keys, err = s.Keys(ctx)
	must(t, "Keys", err)
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	want := []string{newKey(4).ID, newKey(3).ID, newKey(2).ID, newKey(1).ID}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("Keys order = %v, want %v", ids, want)
	}
	if keys[1].Active() {
		t.Errorf("Keys: revoked key listed as active")
	}
	if d := keyDiff(keys[0], newKey(4)); d != "" {
		t.Errorf("Keys[0]: %s", d)
	}
}

func testKeyDuplicateEmail(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, first))

	same := newKey(2)
	same.Email = first.Email
	wantKind(t, "CreateKey(same email)", s.CreateKey(ctx, same), certbank.Conflict)

	upper := newKey(3)
	upper.Email = strings.ToUpper(first.Email)
	wantKind(t, "CreateKey(same email, other case)", s.CreateKey(ctx, upper), certbank.Conflict)

	if _, err := s.KeyByID(ctx, same.ID); certbank.ErrorCode(err) != certbank.NotFound {
		t.Fatalf("a refused key was stored: KeyByID error %v", err)
	}

	// Once the first key is revoked the email may sign up again, but only once.
	must(t, "RevokeKey", s.RevokeKey(ctx, first.ID, at(time.Hour)))
	must(t, "CreateKey(email of a revoked key)", s.CreateKey(ctx, same))
	wantKind(t, "CreateKey(same email again)", s.CreateKey(ctx, upper), certbank.Conflict)

	keys, err := s.Keys(ctx)
	must(t, "Keys", err)
	if len(keys) != 2 {
		t.Fatalf("Keys = %d keys, want 2", len(keys))
	}
}

func testKeyDuplicateHash(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, first))

	dup := newKey(2)
	dup.Hash = first.Hash
	wantKind(t, "CreateKey(same hash)", s.CreateKey(ctx, dup), certbank.Conflict)

	// KeyByHash finds revoked keys too, so a hash stays taken after its key
	// is revoked: lookups must never be ambiguous.
	must(t, "RevokeKey", s.RevokeKey(ctx, first.ID, at(time.Hour)))
	wantKind(t, "CreateKey(hash of a revoked key)", s.CreateKey(ctx, dup), certbank.Conflict)

	got, err := s.KeyByHash(ctx, first.Hash)
	must(t, "KeyByHash", err)
	if got.ID != first.ID {
		t.Fatalf("KeyByHash = %s, want %s", got.ID, first.ID)
	}
}

func testKeyDuplicateID(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, first))
	dup := newKey(2)
	dup.ID = first.ID
	wantKind(t, "CreateKey(same ID)", s.CreateKey(ctx, dup), certbank.Conflict)
	got, err := s.KeyByID(ctx, first.ID)
	must(t, "KeyByID", err)
	if d := keyDiff(got, first); d != "" {
		t.Fatalf("key changed by a refused create: %s", d)
	}
}

func testKeyInvalidInput(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		change func(k *store.Key)
	}{
		{"no ID", func(k *store.Key) { k.ID = "" }},
		{"no hash", func(k *store.Key) { k.Hash = "" }},
		{"no creation time", func(k *store.Key) { k.CreatedAt = time.Time{} }},
	} {
		k := newKey(1)
		tc.change(&k)
		wantKind(t, "CreateKey("+tc.name+")", s.CreateKey(ctx, k), certbank.Invalid)
	}
	keys, err := s.Keys(ctx)
	must(t, "Keys", err)
	if len(keys) != 0 {
		t.Fatalf("Keys = %d keys after invalid creates, want 0", len(keys))
	}
}

func testKeySetTier(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, k))
	other := newKey(2)
	must(t, "CreateKey", s.CreateKey(ctx, other))

	until := at(31 * 24 * time.Hour)
	must(t, "SetTier(with until)", s.SetTier(ctx, k.ID, "pro", until))
	got, err := s.KeyByID(ctx, k.ID)
	must(t, "KeyByID", err)
	want := k
	want.Tier, want.TierUntil = "pro", until
	if d := keyDiff(got, want); d != "" {
		t.Fatalf("after SetTier(with until): %s", d)
	}

	must(t, "SetTier(no until)", s.SetTier(ctx, k.ID, "enterprise", time.Time{}))
	got, err = s.KeyByHash(ctx, k.Hash)
	must(t, "KeyByHash", err)
	want.Tier, want.TierUntil = "enterprise", time.Time{}
	if d := keyDiff(got, want); d != "" {
		t.Fatalf("after SetTier(no until): %s", d)
	}

	got, err = s.KeyByID(ctx, other.ID)
	must(t, "KeyByID(other)", err)
	if d := keyDiff(got, other); d != "" {
		t.Fatalf("SetTier changed another key: %s", d)
	}

	wantKind(t, "SetTier(unknown)", s.SetTier(ctx, newKey(3).ID, "pro", until), certbank.NotFound)
}

func testKeyRevoke(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, k))
	revokedAt := at(2 * time.Hour)
	must(t, "RevokeKey", s.RevokeKey(ctx, k.ID, revokedAt))

	got, err := s.KeyByHash(ctx, k.Hash)
	must(t, "KeyByHash(revoked)", err)
	want := k
	want.RevokedAt = revokedAt
	if d := keyDiff(got, want); d != "" {
		t.Fatalf("after RevokeKey: %s", d)
	}
	if got.Active() {
		t.Fatalf("revoked key is active")
	}

	// Revoking again changes nothing, not even the time.
	must(t, "RevokeKey(again)", s.RevokeKey(ctx, k.ID, at(5*time.Hour)))
	got, err = s.KeyByID(ctx, k.ID)
	must(t, "KeyByID", err)
	if d := keyDiff(got, want); d != "" {
		t.Fatalf("after a second RevokeKey: %s", d)
	}

	wantKind(t, "RevokeKey(unknown)", s.RevokeKey(ctx, newKey(2).ID, revokedAt), certbank.NotFound)
}

func testKeyRotate(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, k))
	until := at(24 * time.Hour)
	must(t, "SetTier", s.SetTier(ctx, k.ID, "pro", until))
	other := newKey(2)
	must(t, "CreateKey", s.CreateKey(ctx, other))
	saveUsage(t, s, k.ID, "2026-03", 7, 70)

	newHash := hashOf("rotated")
	must(t, "RotateKey", s.RotateKey(ctx, k.ID, newHash, "cb_rot"))

	_, err := s.KeyByHash(ctx, k.Hash)
	wantKind(t, "KeyByHash(old hash)", err, certbank.NotFound)
	got, err := s.KeyByHash(ctx, newHash)
	must(t, "KeyByHash(new hash)", err)
	want := k
	want.Hash, want.Prefix, want.Tier, want.TierUntil = newHash, "cb_rot", "pro", until
	if d := keyDiff(got, want); d != "" {
		t.Fatalf("after RotateKey: %s", d)
	}
	req, q, err := s.MonthlyUsage(ctx, k.ID, "2026-03")
	must(t, "MonthlyUsage", err)
	if req != 7 || q != 70 {
		t.Fatalf("usage after RotateKey = %d/%d, want 7/70", req, q)
	}

	// A hash taken by another key (active or revoked) is refused, and the
	// key keeps its current hash.
	wantKind(t, "RotateKey(hash of another key)", s.RotateKey(ctx, k.ID, other.Hash, "cb_x"), certbank.Conflict)
	must(t, "RevokeKey(other)", s.RevokeKey(ctx, other.ID, at(time.Hour)))
	wantKind(t, "RotateKey(hash of a revoked key)", s.RotateKey(ctx, k.ID, other.Hash, "cb_x"), certbank.Conflict)
	got, err = s.KeyByID(ctx, k.ID)
	must(t, "KeyByID", err)
	if d := keyDiff(got, want); d != "" {
		t.Fatalf("after refused RotateKey: %s", d)
	}

	wantKind(t, "RotateKey(unknown)", s.RotateKey(ctx, newKey(3).ID, hashOf("x"), "cb_x"), certbank.NotFound)
	wantKind(t, "RotateKey(revoked)", s.RotateKey(ctx, other.ID, hashOf("y"), "cb_y"), certbank.NotFound)
	if _, err := s.KeyByHash(ctx, hashOf("y")); certbank.ErrorCode(err) != certbank.NotFound {
		t.Fatalf("refused rotation of a revoked key stored its hash: %v", err)
	}
}
