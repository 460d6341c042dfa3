-- Read one deployment's state now. KEYS: 1 windows hash, 2 effective
-- limit, 3 breaker. ARGV: 1 window ms.
-- Returns {now_ms, w, reserved, settled, used, requests_1s, requests_10s,
-- effective_limit, open_until_ms, absorbed, carried}, carried being the
-- part of the last window's charges a sliding window would still count.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local W = tonumber(ARGV[1])
local w, w1, w10 = math.floor(now / W), math.floor(now / math.floor(W / 60)), math.floor(now / math.floor(W / 6))
local s = redis.call('HMGET', KEYS[1], 'w', 'r', 's', 'u', 'w1', 'c1', 'w10', 'c10', 'a', 'pw', 'pr')
local r, st, u, a, c1, c10, carried = 0, 0, 0, 0, 0, 0, 0
local sw = tonumber(s[1])
if sw == w then
  r, st, u, a = tonumber(s[2]), tonumber(s[3]), tonumber(s[4]), tonumber(s[9] or '0')
  if tonumber(s[10] or '-1') == w - 1 then carried = tonumber(s[11] or '0') end
elseif sw == w - 1 then
  carried = tonumber(s[2])
end
carried = math.floor(carried * ((w + 1) * W - now) / W)
if tonumber(s[5]) == w1 then c1 = tonumber(s[6]) end
if tonumber(s[7]) == w10 then c10 = tonumber(s[8]) end
local eff = tonumber(redis.call('GET', KEYS[2]) or '0')
local open = tonumber(redis.call('GET', KEYS[3]) or '0')
if open <= now then open = 0 end
return {now, w, r, st, u, c1, c10, eff, open, a, carried}
