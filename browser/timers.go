package browser

// timerWatchJS runs before any script of every document. It keeps count
// of the short timers (setTimeout of at most 500 ms) a page sets, so an
// action's outcome waits for what the action deferred: a debounced
// search, a navigation set off a moment after a click, a menu that opens
// after a short delay. A timer set from the callback of one it counts is
// counted too, three deep, so a page's own polling loop is counted for
// its first three turns and then left alone; a timer set inside a
// callback it does not count is not counted. Each timer is tagged with
// the epoch of the action it was set under (mark), so a timer set before
// an action is never waited for. The page's setTimeout and clearTimeout
// stay native to look at (proxies of the originals), and do what they
// did; the real setTimeout is kept for headroom's own waits, which must
// not count themselves.
const timerWatchJS = `(() => {
if (self.__headroomTimers) return;
const set = self.setTimeout, clear = self.clearTimeout;
const T = {epoch: 0, pending: new Map(), fired: 0, setTimeout: set.bind(self)};
T.mark = () => ++T.epoch;
T.waiting = () => { for (const e of T.pending.values()) if (e === T.epoch) return true; return false; };
Object.defineProperty(self, '__headroomTimers', {value: T});
let depth = 0; // the running callback's place in a counted chain; -1 in one not counted
self.setTimeout = new Proxy(set, {apply(target, that, args) {
  const fn = args[0];
  if (typeof fn !== 'function') return Reflect.apply(target, that, args);
  const counted = depth >= 0 && depth < 3 && (Number(args[1]) || 0) <= 500;
  const d = counted ? depth + 1 : -1;
  let id;
  args[0] = function (...a) {
    T.pending.delete(id);
    if (counted) T.fired = performance.now();
    const prev = depth;
    depth = d;
    try { return fn.apply(this, a); } finally { depth = prev; }
  };
  id = Reflect.apply(target, that, args);
  if (counted) T.pending.set(id, T.epoch);
  return id;
}});
self.clearTimeout = new Proxy(clear, {apply(target, that, args) {
  T.pending.delete(args[0]);
  return Reflect.apply(target, that, args);
}});
})();`

// markJS starts a new action's epoch of timers, then reads the page's
// state as domHashJS does.
const markJS = `(self.__headroomTimers && self.__headroomTimers.mark(), ` + domHashJS + `)`
