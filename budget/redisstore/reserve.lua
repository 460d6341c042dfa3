-- Reserve one call's cost on one deployment: tokens in the current window,
-- one request (or more) in the 1 s and 10 s windows; all of it or none.
-- KEYS: 1 windows hash, 2 reservation record, 3 effective limit, 4 breaker
-- ARGV: 1 tokens, 2 requests, 3 token limit, 4 request limit (per window),
--       5 margin, 6 window ms
-- Returns {1, w, w1, w10, tokens, requests, at_ms} when admitted (also for
-- a resend of an id already admitted), {0, limit, wait_ms, too_large} when
-- refused. Time is the server's: every container sees the same windows.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local rec = redis.call('HMGET', KEYS[2], 'w', 'w1', 'w10', 'tok', 'req', 'at')
if rec[1] then
  return {1, tonumber(rec[1]), tonumber(rec[2]), tonumber(rec[3]), tonumber(rec[4]), tonumber(rec[5]), tonumber(rec[6])}
end

local cost, reqs = tonumber(ARGV[1]), tonumber(ARGV[2])
local limT, limR, margin, W = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local W1, W10 = math.floor(W / 60), math.floor(W / 6)
local w, w1, w10 = math.floor(now / W), math.floor(now / W1), math.floor(now / W10)

local open = tonumber(redis.call('GET', KEYS[4]) or '0')
if open > now then
  return {0, 'breaker', open - now, 0}
end

local lim = limT
local eff = tonumber(redis.call('GET', KEYS[3]) or '0')
if eff > 0 and eff < lim then lim = eff end
local cap = math.floor(lim * margin)
if cost > cap then
  return {0, 'tokens', (w + 1) * W - now, 1}
end

local s = redis.call('HMGET', KEYS[1], 'w', 'r', 'w1', 'c1', 'w10', 'c10')
local reserved, c1, c10 = 0, 0, 0
if tonumber(s[1]) == w then reserved = tonumber(s[2]) end
if tonumber(s[3]) == w1 then c1 = tonumber(s[4]) end
if tonumber(s[5]) == w10 then c10 = tonumber(s[6]) end

-- The refusal with the longest wait is the one that binds.
local limit, wait = false, -1
if reserved + cost > cap then limit, wait = 'tokens', (w + 1) * W - now end
if c1 + reqs > math.max(1, math.floor(limR / 60)) and (w1 + 1) * W1 - now > wait then
  limit, wait = 'requests_1s', (w1 + 1) * W1 - now
end
if c10 + reqs > math.max(1, math.floor(limR / 6)) and (w10 + 1) * W10 - now > wait then
  limit, wait = 'requests_10s', (w10 + 1) * W10 - now
end
if limit then
  return {0, limit, wait, 0}
end

if tonumber(s[1]) ~= w then
  -- A new token window: keep the one before for settles that arrive late.
  local cur = redis.call('HMGET', KEYS[1], 'w', 'r', 's', 'u')
  if cur[1] and tonumber(cur[1]) == w - 1 then
    redis.call('HSET', KEYS[1], 'pw', cur[1], 'pr', cur[2], 'ps', cur[3], 'pu', cur[4])
  else
    redis.call('HDEL', KEYS[1], 'pw', 'pr', 'ps', 'pu')
  end
  redis.call('HSET', KEYS[1], 'w', w, 's', 0, 'u', 0)
end
redis.call('HSET', KEYS[1], 'r', reserved + cost, 'w1', w1, 'c1', c1 + reqs, 'w10', w10, 'c10', c10 + reqs)
redis.call('PEXPIRE', KEYS[1], 2 * W)
redis.call('HSET', KEYS[2], 'w', w, 'w1', w1, 'w10', w10, 'tok', cost, 'req', reqs, 'at', now)
redis.call('PEXPIRE', KEYS[2], 2 * W)
return {1, w, w1, w10, cost, reqs, now}
