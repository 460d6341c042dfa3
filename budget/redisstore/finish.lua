-- Settle or cancel a batch of reservations of one deployment, each once,
-- against the window it was charged to (the current or the previous one;
-- an older one is gone).
-- KEYS: 1 windows hash, 2 and 3 the reservation records of even and odd
--       windows
-- ARGV: 1 'refund' or 'hold', then per call: id, window, actual tokens,
--       '1' to cancel
-- Returns the number of reservations it changed.
local s = redis.call('HMGET', KEYS[1], 'w', 'pw', 'r', 'pr', 's', 'ps', 'u', 'pu', 'w1', 'c1', 'w10', 'c10')
if not s[1] then return 0 end
local win = {tonumber(s[1]), tonumber(s[2])}
local r, st, u = {tonumber(s[3]), tonumber(s[4])}, {tonumber(s[5]), tonumber(s[6])}, {tonumber(s[7]), tonumber(s[8])}
local c1, c10 = tonumber(s[10]), tonumber(s[12])
local changed = 0

for i = 2, #ARGV, 4 do
  local id, window = ARGV[i], tonumber(ARGV[i + 1])
  local recs = KEYS[2 + window % 2]
  local rec = redis.call('HGET', recs, id)
  if rec and not string.find(rec, 'done', 1, true) then
    redis.call('HSET', recs, id, rec .. ' done')
    local w, w1, w10, tok, req = string.match(rec, '^(%d+) (%d+) (%d+) (%d+) (%d+)')
    w, tok, req = tonumber(w), tonumber(tok), tonumber(req)
    local k = (win[1] == w and 1) or (win[2] == w and 2) or nil
    if k then
      local actual = tonumber(ARGV[i + 2])
      if ARGV[i + 3] == '1' then
        r[k] = math.max(0, r[k] - tok)
        if tonumber(s[9]) == tonumber(w1) then c1 = math.max(0, c1 - req) end
        if tonumber(s[11]) == tonumber(w10) then c10 = math.max(0, c10 - req) end
      else
        if ARGV[1] == 'refund' and actual < tok then r[k] = math.max(0, r[k] - (tok - actual)) end
        st[k], u[k] = st[k] + tok, u[k] + actual
      end
      changed = changed + 1
    end
  end
end

if changed > 0 then
  redis.call('HSET', KEYS[1], 'r', r[1], 's', st[1], 'u', u[1], 'c1', c1, 'c10', c10)
  if r[2] then redis.call('HSET', KEYS[1], 'pr', r[2], 'ps', st[2], 'pu', u[2]) end
end
return changed
