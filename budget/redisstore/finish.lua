-- Settle or cancel a reservation, once, against the window it was charged
-- to (the current or the previous one; an older one is gone).
-- KEYS: 1 windows hash, 2 reservation record
-- ARGV: 1 actual tokens, 2 'refund' or 'hold', 3 '1' to cancel
-- Returns 1 when it changed something, 0 when there was nothing to do.
local rec = redis.call('HMGET', KEYS[2], 'w', 'w1', 'w10', 'tok', 'req', 'done')
if not rec[1] or rec[6] then return 0 end
redis.call('HSET', KEYS[2], 'done', 1)
local w, tok, req = tonumber(rec[1]), tonumber(rec[4]), tonumber(rec[5])

local s = redis.call('HMGET', KEYS[1], 'w', 'pw', 'r', 'pr', 'w1', 'c1', 'w10', 'c10')
local p
if s[1] and tonumber(s[1]) == w then p = '' elseif s[2] and tonumber(s[2]) == w then p = 'p' else return 0 end
local reserved = tonumber(s[3 + (p == 'p' and 1 or 0)])

if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], p .. 'r', math.max(0, reserved - tok))
  if tonumber(s[5]) == tonumber(rec[2]) then redis.call('HSET', KEYS[1], 'c1', math.max(0, tonumber(s[6]) - req)) end
  if tonumber(s[7]) == tonumber(rec[3]) then redis.call('HSET', KEYS[1], 'c10', math.max(0, tonumber(s[8]) - req)) end
  return 1
end

local actual = tonumber(ARGV[1])
redis.call('HINCRBY', KEYS[1], p .. 's', tok)
redis.call('HINCRBY', KEYS[1], p .. 'u', actual)
if ARGV[2] == 'refund' and actual < tok then
  redis.call('HSET', KEYS[1], p .. 'r', math.max(0, reserved - (tok - actual)))
end
return 1
