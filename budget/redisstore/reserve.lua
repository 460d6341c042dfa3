-- Reserve a batch of calls on one deployment, in order, each as if alone:
-- tokens in the current window and a request (or more) in the 1 s and 10 s
-- windows, all of it or none. Batching many callers' reservations into one
-- script run shares the reads and writes of the deployment's state among
-- them; a batch of one is the plain case.
--
-- KEYS: 1 windows hash, 2 effective limit, 3 breaker,
--       4 and 5 the reservation records of even and odd windows
-- ARGV: 1 window ms, then per call: id, tokens, requests, token limit,
--       request limit (per window), margin, spacing ms (0: none), '1' to
--       count the token window as sliding
-- Returns one reply per call: {1, w, w1, w10, tokens, requests, at_ms, held,
-- absorbed, carried} when admitted, held being what the window held once
-- it was, absorbed the part of it absorbed from headers, and carried the
-- last window's part a sliding window would still count (a resend of an id
-- admitted before charges nothing and has none of them), {0, limit,
-- wait_ms, too_large} when refused.
-- Time is the server's, so every container sees the same windows.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local W = tonumber(ARGV[1])
local W1, W10 = math.floor(W / 60), math.floor(W / 6)
local w, w1, w10 = math.floor(now / W), math.floor(now / W1), math.floor(now / W10)
local recs, prevRecs = KEYS[4 + w % 2], KEYS[4 + (w + 1) % 2]

local ext = redis.call('MGET', KEYS[2], KEYS[3])
local eff, open = tonumber(ext[1] or '0'), tonumber(ext[2] or '0')

local s = redis.call('HMGET', KEYS[1], 'w', 'r', 'w1', 'c1', 'w10', 'c10', 's', 'u', 'next', 'a', 'pw', 'pr')
local nextAt = tonumber(s[9] or '0')
local sw, reserved, absorbed, c1, c10, prev = tonumber(s[1]), 0, 0, 0, 0, 0
if sw == w then
  reserved, absorbed = tonumber(s[2]), tonumber(s[10] or '0')
  if tonumber(s[11] or '-1') == w - 1 then prev = tonumber(s[12] or '0') end
else
  if sw == w - 1 then prev = tonumber(s[2]) end
  -- A new token window. Keep the one before for settles that arrive late;
  -- drop the records of the one before that (UNLINK frees them off the
  -- server's main thread).
  if sw == w - 1 then
    redis.call('HSET', KEYS[1], 'w', w, 'r', 0, 's', 0, 'u', 0, 'a', 0, 'pw', sw, 'pr', s[2], 'ps', s[7], 'pu', s[8])
    redis.call('UNLINK', recs)
  else
    redis.call('HSET', KEYS[1], 'w', w, 'r', 0, 's', 0, 'u', 0, 'a', 0, 'pw', -1)
    redis.call('UNLINK', recs, prevRecs)
  end
  -- Set once a window, so the keys outlive the window they count by at
  -- least one window and at most two.
  redis.call('PEXPIRE', KEYS[1], 2 * W)
end
if tonumber(s[3]) == w1 then c1 = tonumber(s[4]) end
if tonumber(s[5]) == w10 then c10 = tonumber(s[6]) end

-- A sliding window still counts the part of the last window's charges
-- that falls inside it, taken as spread evenly (the sliding window
-- counter's estimate).
local carried = math.floor(prev * ((w + 1) * W - now) / W)

local out, charged = {}, false
for i = 2, #ARGV, 8 do
  local id = ARGV[i]
  -- A record is "w w1 w10 tokens requests at_ms", with " done" appended
  -- once settled or cancelled.
  local rec = redis.call('HGET', recs, id) or redis.call('HGET', prevRecs, id)
  if rec then
    local rw, r1, r10, tok, req, at = string.match(rec, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)')
    out[#out + 1] = {1, tonumber(rw), tonumber(r1), tonumber(r10), tonumber(tok), tonumber(req), tonumber(at)}
  elseif open > now then
    out[#out + 1] = {0, 'breaker', open - now, 0}
  else
    local cost, reqs = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    local limT, limR = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
    if eff > 0 and eff < limT then limT = eff end
    local cap = math.floor(limT * tonumber(ARGV[i + 5]))
    if cost > cap then
      out[#out + 1] = {0, 'tokens', (w + 1) * W - now, 1}
    else
      -- The refusal with the longest wait is the one that binds.
      local limit, wait = false, -1
      local sliding = ARGV[i + 7] == '1'
      local held = reserved
      if sliding then held = reserved + carried end
      if held + cost > cap then
        -- Room frees at the window's end, or, sliding, sooner as the
        -- carried part ages out.
        local at = (w + 1) * W - now
        if sliding and reserved + cost <= cap and prev > 0 then
          at = math.max(1, math.ceil((held + cost - cap) * W / prev))
        end
        limit, wait = 'tokens', at
      end
      if c1 + reqs > math.max(1, math.floor(limR / 60)) and (w1 + 1) * W1 - now > wait then
        limit, wait = 'requests_1s', (w1 + 1) * W1 - now
      end
      if c10 + reqs > math.max(1, math.floor(limR / 6)) and (w10 + 1) * W10 - now > wait then
        limit, wait = 'requests_10s', (w10 + 1) * W10 - now
      end
      local spacing = tonumber(ARGV[i + 6])
      if spacing > 0 and nextAt > now and nextAt - now > wait then
        limit, wait = 'spacing', nextAt - now
      end
      if limit then
        out[#out + 1] = {0, limit, wait, 0}
      else
        reserved, c1, c10, charged = reserved + cost, c1 + reqs, c10 + reqs, true
        if spacing > 0 then nextAt = now + spacing end
        redis.call('HSET', recs, id, string.format('%d %d %d %d %d %d', w, w1, w10, cost, reqs, now))
        out[#out + 1] = {1, w, w1, w10, cost, reqs, now, reserved, absorbed, carried}
      end
    end
  end
end

if charged then
  redis.call('HSET', KEYS[1], 'r', reserved, 'w1', w1, 'c1', c1, 'w10', w10, 'c10', c10, 'next', nextAt)
  if redis.call('PTTL', recs) == -1 then
    redis.call('PEXPIRE', recs, 2 * W)
  end
end
return out
