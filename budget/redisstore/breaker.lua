-- Open a deployment's breaker for ARGV[1] ms from now by the server's
-- clock, keeping a later open-until already set. KEYS: 1 breaker.
-- Returns the open-until time in ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = now + tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur > untilMs then untilMs = cur end
if untilMs > now then
  redis.call('SET', KEYS[1], string.format('%d', untilMs), 'PX', untilMs - now)
end
return untilMs
