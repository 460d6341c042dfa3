-- Count a 429 of a deployment (ARGV[2] its cause; empty to only read) in
-- the current token window of ARGV[1] ms, by the server's clock, and
-- return this window's and the previous one's counts. KEYS: 1 the
-- deployment's 429 hash: w (the window index), c:CAUSE (this window) and
-- p:CAUSE (the window before), rotated when a new window begins.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local idx = math.floor(now / win)
local causes = {'tokens', 'requests', 'adjustment', 'unknown'}
local w = tonumber(redis.call('HGET', KEYS[1], 'w') or '-1')
if w ~= idx then
  for _, c in ipairs(causes) do
    local prev = 0
    if w == idx - 1 then prev = tonumber(redis.call('HGET', KEYS[1], 'c:' .. c) or '0') end
    redis.call('HSET', KEYS[1], 'p:' .. c, prev, 'c:' .. c, 0)
  end
  redis.call('HSET', KEYS[1], 'w', idx)
end
if ARGV[2] ~= '' then
  redis.call('HINCRBY', KEYS[1], 'c:' .. ARGV[2], 1)
end
redis.call('PEXPIRE', KEYS[1], 2 * win)
local out = {}
for _, c in ipairs(causes) do
  table.insert(out, tonumber(redis.call('HGET', KEYS[1], 'c:' .. c) or '0') + tonumber(redis.call('HGET', KEYS[1], 'p:' .. c) or '0'))
end
return out
