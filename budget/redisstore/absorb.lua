-- Add use the store did not see (reported by Azure's headers) to the
-- current windows, whatever the limits: the server already counted it.
-- KEYS: 1 windows hash. ARGV: 1 window ms, 2 tokens, 3 requests.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local W = tonumber(ARGV[1])
local w, w1, w10 = math.floor(now / W), math.floor(now / math.floor(W / 60)), math.floor(now / math.floor(W / 6))
local s = redis.call('HMGET', KEYS[1], 'w', 'r', 'w1', 'c1', 'w10', 'c10', 's', 'u', 'a')
local sw, reserved, absorbed = tonumber(s[1]), 0, 0
if sw == w then
  reserved, absorbed = tonumber(s[2]), tonumber(s[9] or '0')
else
  -- A new token window, rolled as a reservation would roll it.
  if sw == w - 1 then
    redis.call('HSET', KEYS[1], 'w', w, 's', 0, 'u', 0, 'pw', sw, 'pr', s[2], 'ps', s[7], 'pu', s[8])
  else
    redis.call('HSET', KEYS[1], 'w', w, 's', 0, 'u', 0, 'pw', -1)
  end
  redis.call('PEXPIRE', KEYS[1], 2 * W)
end
local tok, req = tonumber(ARGV[2]), tonumber(ARGV[3])
local c1, c10 = req, req
if tonumber(s[3]) == w1 then c1 = tonumber(s[4]) + req end
if tonumber(s[5]) == w10 then c10 = tonumber(s[6]) + req end
-- 'a' keeps the absorbed part apart, so what the fleet reserved itself
-- can still be told from it.
redis.call('HSET', KEYS[1], 'r', reserved + tok, 'a', absorbed + tok, 'w1', w1, 'c1', c1, 'w10', w10, 'c10', c10)
return 1
