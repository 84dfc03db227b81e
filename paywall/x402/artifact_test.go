package x402

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// TestArtifactIsFresh fails when contracts/TestUSDC.sol changed without
// re-running contracts/compile.mjs.
func TestArtifactIsFresh(t *testing.T) {
	src, err := os.ReadFile("../../contracts/TestUSDC.sol")
	if err != nil {
		t.Skipf("contract source not found: %v", err)
	}
	var art tokenArtifact
	if err := json.Unmarshal(testTokenJSON, &art); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != art.SourceSHA256 {
		t.Fatalf("testtoken.json was compiled from a different TestUSDC.sol (sha256 %s, source now %s); run: cd contracts && npm install && node compile.mjs", art.SourceSHA256, got)
	}
	if _, _, err := loadTestToken(); err != nil {
		t.Fatal(err)
	}
}
