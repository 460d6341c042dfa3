package browser

import (
	"encoding/json"
	"fmt"
	"time"
)

// deterministicJS runs before any script of every document. It makes the
// page's clock start at the recording time and advance by a millisecond
// per reading, and makes Math.random and crypto.getRandomValues a fixed
// sequence, so a replayed page renders as it did when recorded.
func deterministicJS(clock time.Time) string {
	return fmt.Sprintf(`(() => {
if (self.__headroomDeterministic) return;
Object.defineProperty(self, '__headroomDeterministic', {value: true});
let seed = 0x2545F491;
const next = () => { // mulberry32
  seed |= 0; seed = seed + 0x6D2B79F5 | 0;
  let t = Math.imul(seed ^ seed >>> 15, 1 | seed);
  t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
  return ((t ^ t >>> 14) >>> 0) / 4294967296;
};
Math.random = next;
if (self.crypto && crypto.getRandomValues) {
  const fill = function(a) {
    const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let i = 0; i < b.length; i++) b[i] = Math.floor(next() * 256);
    return a;
  };
  crypto.getRandomValues = fill;
  if (crypto.randomUUID) crypto.randomUUID = () => {
    const b = fill(new Uint8Array(16));
    b[6] = b[6] & 0x0f | 0x40; b[8] = b[8] & 0x3f | 0x80;
    const h = [...b].map(x => x.toString(16).padStart(2, '0')).join('');
    return h.slice(0,8)+'-'+h.slice(8,12)+'-'+h.slice(12,16)+'-'+h.slice(16,20)+'-'+h.slice(20);
  };
}
let now = %d;
const RealDate = Date;
const tick = () => now++;
function FixedDate(...args) {
  if (!new.target) return new RealDate(tick()).toString();
  return args.length ? new RealDate(...args) : new RealDate(tick());
}
FixedDate.prototype = RealDate.prototype;
Object.setPrototypeOf(FixedDate, RealDate);
FixedDate.now = tick;
FixedDate.parse = RealDate.parse;
FixedDate.UTC = RealDate.UTC;
Object.defineProperty(FixedDate.prototype, 'constructor', {value: FixedDate});
self.Date = FixedDate;
})();`, clock.UnixMilli())
}

// socketGuardJS makes the page's WebSocket constructor refuse hosts off
// the allowed domains, and every host in a replay (a recording holds no
// socket traffic to answer with). On a browser this run did not launch,
// whose WebRTC settings it cannot set (rtcPolicy), it refuses
// RTCPeerConnection too: WebRTC's UDP passes no proxy and no interception.
func socketGuardJS(o Options, a allowlist) string {
	names, ips := a.jsList()
	if o.Replay != nil {
		names, ips = []string{}, []string{}
	}
	n, _ := json.Marshal(names)
	ip, _ := json.Marshal(ips)
	return fmt.Sprintf(`(() => {
if (!%t) return;
for (const k of ['RTCPeerConnection', 'webkitRTCPeerConnection']) {
  const Real = self[k];
  if (!Real || Real.__headroomGuard) continue;
  self[k] = new Proxy(Real, {
    construct() { throw new DOMException('this run may not open a WebRTC connection: its UDP cannot be kept to the allowed domains', 'NotAllowedError'); },
    get(target, key) { return key === '__headroomGuard' ? true : Reflect.get(target, key); },
  });
}
})();
(() => {
const Real = self.WebSocket;
if (!Real || Real.__headroomGuard) return;
const names = %s, ips = %s;
const ok = (u) => {
  let h;
  try { h = new URL(u, location.href).hostname.toLowerCase(); } catch (e) { return false; }
  if (h.startsWith('[')) h = h.slice(1, -1);
  if (/^[0-9.]+$/.test(h) || h.includes(':')) return ips.includes(h);
  return names.some(d => h === d || h.endsWith('.' + d));
};
const Guarded = new Proxy(Real, {
  construct(target, args, nt) {
    if (!ok(args[0])) throw new DOMException('this run may not open a WebSocket to ' + args[0], 'SecurityError');
    return Reflect.construct(target, args, nt);
  },
  get(target, key) { return key === '__headroomGuard' ? true : Reflect.get(target, key); },
});
self.WebSocket = Guarded;
})();`, o.Remote != "", n, ip)
}
