-- Add use the store did not see (reported by Azure's headers) to the
-- current windows, whatever the limits: the server already counted it.
-- KEYS: 1 windows hash. ARGV: 1 window ms, 2 tokens, 3 requests.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local W = tonumber(ARGV[1])
local w, w10 = math.floor(now / W), math.floor(now / math.floor(W / 6))
local s = redis.call('HMGET', KEYS[1], 'w', 'r', 'w10', 'c10', 's', 'u', 'a')
local sw, reserved, absorbed = tonumber(s[1]), 0, 0
if sw == w then
  reserved, absorbed = tonumber(s[2]), tonumber(s[7] or '0')
else
  -- A new token window, rolled as a reservation would roll it.
  if sw == w - 1 then
    redis.call('HSET', KEYS[1], 'w', w, 's', 0, 'u', 0, 'pw', sw, 'pr', s[2], 'ps', s[5], 'pu', s[6])
  else
    redis.call('HSET', KEYS[1], 'w', w, 's', 0, 'u', 0, 'pw', -1)
  end
  redis.call('PEXPIRE', KEYS[1], 2 * W)
end
local tok, req = tonumber(ARGV[2]), tonumber(ARGV[3])
-- Requests go to the 10 s window only: Azure's count says how many its
-- window holds, not which second they fell in, and put in the 1 s window
-- they would close a second the fleet may have left empty.
local c10 = req
if tonumber(s[3]) == w10 then c10 = tonumber(s[4]) + req end
-- 'a' keeps the absorbed part apart, so what the fleet reserved itself
-- can still be told from it.
redis.call('HSET', KEYS[1], 'r', reserved + tok, 'a', absorbed + tok, 'w10', w10, 'c10', c10)
return 1
