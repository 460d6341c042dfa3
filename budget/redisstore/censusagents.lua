-- The fleet's agents, a sorted set scored by alive-until (ms, the
-- server's clock). ARGV[1]: an agent to check in, "" for none; ARGV[2]:
-- its time to live in ms. Drops the agents whose time ran out and
-- returns how many are left. KEYS: 1 the set.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[1] ~= '' then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return redis.call('ZCARD', KEYS[1])
