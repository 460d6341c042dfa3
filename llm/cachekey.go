package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// cacheKey is the prompt_cache_key a session's calls carry on a
// deployment whose API version takes one, "" elsewhere. Azure keeps a
// prompt cache per deployment and uses the key to send requests that
// share a prefix to the same cache; the router's session affinity keeps
// a session on its deployment, and the key keeps it on its cache there.
// The key is a hash: a session's name is the caller's business, not
// Azure's.
func cacheKey(session, apiVersion string) string {
	if session == "" || !takesCacheKey(apiVersion) {
		return ""
	}
	h := sha256.Sum256([]byte("headroom-session\x00" + session))
	return "hr-" + hex.EncodeToString(h[:8])
}

// takesCacheKey reports an API version whose chat and responses bodies
// take prompt_cache_key: the v1 API ("v1", "preview", "latest"), where
// Azure documents it. A dated version is not sent the field: a
// parameter it does not define is one more way to draw a 400.
func takesCacheKey(apiVersion string) bool {
	switch strings.ToLower(apiVersion) {
	case "v1", "preview", "latest":
		return true
	}
	return false
}
