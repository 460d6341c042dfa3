package azuresim

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"slices"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// Azure's prompt cache, as published: a prompt's prefix is cached from
// 1,024 tokens on, in 128-token blocks, per deployment, and forgotten after
// 5 to 10 idle minutes. A call reports the cached part of its prompt in
// usage; it is charged at admission all the same (what the OpenAI
// community reports: cached tokens do not count less against TPM), so
// the cache changes what usage says and nothing the meters count.
//
// A prompt reuses the longest cached block boundary shorter than itself:
// at least its last token is always read afresh, so an identical prompt
// of 1,152 tokens reports 1,024 cached, never 1,152. Every boundary of an
// admitted prompt (1,024, 1,152, ... below its length) is then stored or
// refreshed: the model read the prompt whether or not its answer arrives.
const (
	cacheMin   = 1024
	cacheBlock = 128
	// maxCacheEntries bounds one deployment's cache; past it the prefixes
	// used longest ago are dropped first.
	maxCacheEntries = 1 << 16
)

// DefaultCacheIdle is how long a cached prefix lasts unused, the short end
// of Azure's 5 to 10 minutes.
const DefaultCacheIdle = 5 * time.Minute

// prefixKey names one prompt prefix: a digest of its tokens.
type prefixKey [16]byte

// promptCache is one deployment's cached prefixes and when each was last
// used. order holds every store or refresh in time order from head; a
// record whose time is no longer its key's is stale and skipped.
type promptCache struct {
	mu    sync.Mutex
	idle  time.Duration
	limit int
	last  time.Time // the latest use seen; the cache's clock never runs back
	used  map[prefixKey]time.Time
	order []cacheUse
	head  int
}

type cacheUse struct {
	key prefixKey
	at  time.Time
}

func newPromptCache(idle time.Duration, limit int) *promptCache {
	return &promptCache{idle: idle, limit: limit, used: map[prefixKey]time.Time{}}
}

// use answers how many tokens of a prompt are cached, given the keys of
// its block boundaries (keys[i] names its first cacheMin + i×cacheBlock
// tokens), and marks every one of them used at now.
func (pc *promptCache) use(keys []prefixKey, now time.Time) int64 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if now.Before(pc.last) {
		now = pc.last
	}
	pc.last = now
	pc.expire(now)
	var cached int64
	for i := len(keys) - 1; i >= 0; i-- {
		if _, ok := pc.used[keys[i]]; ok {
			cached = cacheMin + int64(i)*cacheBlock
			break
		}
	}
	for _, k := range keys {
		pc.used[k] = now
		pc.order = append(pc.order, cacheUse{k, now})
	}
	for len(pc.used) > pc.limit {
		pc.dropOldest()
	}
	pc.compact()
	return cached
}

// expire forgets the prefixes idle for pc.idle or longer.
func (pc *promptCache) expire(now time.Time) {
	for pc.head < len(pc.order) && !pc.order[pc.head].at.Add(pc.idle).After(now) {
		pc.dropOldest()
	}
}

// dropOldest takes the oldest record off order, and its key out of the
// cache unless a later use refreshed it.
func (pc *promptCache) dropOldest() {
	u := pc.order[pc.head]
	pc.head++
	if at, ok := pc.used[u.key]; ok && at.Equal(u.at) {
		delete(pc.used, u.key)
	}
}

// compact keeps order's memory in proportion to the cache: records that
// aged out are copied over once they are half of it, and stale ones,
// left by refreshes, are dropped by rebuilding it from the cache once they
// outnumber the live ones. Both are amortised over the uses that made
// them.
func (pc *promptCache) compact() {
	if pc.head > 0 && 2*pc.head >= len(pc.order) {
		pc.order, pc.head = pc.order[:copy(pc.order, pc.order[pc.head:])], 0
	}
	if len(pc.order)-pc.head <= 2*max(len(pc.used), 1024) {
		return
	}
	order := make([]cacheUse, 0, len(pc.used))
	for k, at := range pc.used {
		order = append(order, cacheUse{k, at})
	}
	slices.SortFunc(order, func(a, b cacheUse) int { return a.at.Compare(b.at) })
	pc.order, pc.head = order, 0
}

// Markers stand for the chat format's own tokens in a rendered prompt,
// above any token id; an image's tokens carry imageMark.
const (
	messageMark = 1 << 40
	nameMark    = messageMark + 8
	primerMark  = messageMark + 16
	imageMark   = 1 << 63
)

// prefixKeys renders a prompt to tokens as the simulator counts them, and
// returns the keys of its block boundaries below its length, and the
// length: the prompt tokens its usage reports, so that a prompt is
// tokenized once. Each message is its three format tokens, its role, its
// name and the name's token, its text, then each of its images as that
// many tokens of the image's digest; the reply primer ends the prompt.
// Two prompts share a prefix exactly when their leading messages agree.
func prefixKeys(msgs []tokens.Message, pics [][]picture, model string) ([]prefixKey, int64) {
	p := prefixHasher{h: sha256.New()}
	for i, m := range msgs {
		for j := range int64(tokens.PerMessage) {
			p.add(messageMark + uint64(j))
		}
		p.text(m.Role)
		if m.Name != "" {
			p.text(m.Name)
			p.add(nameMark)
		}
		p.text(m.Content)
		if i < len(pics) {
			for _, pic := range pics[i] {
				unit := binary.BigEndian.Uint64(pic.digest[:8]) | imageMark
				for range ImageTokens(model, pic.width, pic.height, pic.detail) {
					p.add(unit)
				}
			}
		}
	}
	for j := range int64(tokens.ReplyPrimer) {
		p.add(primerMark + uint64(j))
	}
	keys := p.keys
	if len(keys) > 0 && cacheMin+int64(len(keys)-1)*cacheBlock >= p.n {
		keys = keys[:len(keys)-1] // a boundary at the prompt's very end: below its length only
	}
	return keys, p.n
}

// prefixHasher digests a rendered prompt token by token, keeping the
// digest at each block boundary.
type prefixHasher struct {
	h    hash.Hash
	n    int64
	keys []prefixKey
	buf  [8]byte
}

func (p *prefixHasher) text(s string) {
	for _, id := range tokens.Encode(s) {
		p.add(uint64(id))
	}
}

func (p *prefixHasher) add(unit uint64) {
	binary.BigEndian.PutUint64(p.buf[:], unit)
	p.h.Write(p.buf[:])
	p.n++
	if p.n >= cacheMin && (p.n-cacheMin)%cacheBlock == 0 {
		var k prefixKey
		copy(k[:], p.h.Sum(nil))
		p.keys = append(p.keys, k)
	}
}

// promptTokens is a prompt's length as its usage reports it (text by the
// tokenizer, images by their published counts) and the part of it that
// d's cache holds, which it then stores: rendered once for both when d
// keeps a cache, counted without a digest when it keeps none.
func (s *Sim) promptTokens(d *deployment, msgs []tokens.Message, pics [][]picture, images int64) (prompt, cached int64) {
	if d.cache == nil {
		return int64(tokens.Chat(msgs)) + images, 0
	}
	keys, prompt := prefixKeys(msgs, pics, d.cfg.Model)
	if prompt <= cacheMin {
		return prompt, 0
	}
	n := d.cache.use(keys, s.clock())
	s.mu.Lock()
	d.stats.CachedTokens += n
	s.mu.Unlock()
	return prompt, n
}
