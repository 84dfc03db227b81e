package quota

import (
	"context"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// EffectiveTier is the tier a key is served with now: its own tier while
// the subscription lasts (with the subscription's end, zero for none),
// Free after it ends or if the tier is unknown.
func EffectiveTier(site *certbank.Site, k store.Key, now time.Time) (certbank.Tier, time.Time) {
	free, _ := site.Tier(certbank.TierFree)
	if k.Tier == certbank.TierFree || k.Tier == "" {
		return free, time.Time{}
	}
	if !k.TierUntil.IsZero() && !now.Before(k.TierUntil) {
		return free, time.Time{}
	}
	t, ok := site.Tier(k.Tier)
	if !ok {
		return free, time.Time{}
	}
	return t, k.TierUntil
}

// Noop is the accountant of the benchmark baseline: it records nothing
// and enforces no limit, picking as for a key that has seen nothing.
type Noop struct{}

// Arrive announces nothing.
func (Noop) Arrive() Arrival { return Arrival{} }

// Do picks s's questions without recording them.
func (Noop) Do(_ context.Context, s *Spend) error {
	s.Arrival.Leave()
	if s.Count && s.Pick != nil {
		s.Picked = s.Pick(seen{}, certbank.Unlimited)
	}
	return nil
}

// Close does nothing.
func (Noop) Close() {}
