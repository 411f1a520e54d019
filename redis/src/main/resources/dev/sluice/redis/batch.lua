--[[
Sluice: the driver for a batch, appended after every algorithm file (one script for all algorithms).
A batch is many independent single-permit decisions that concurrent callers made on one limiter,
sent as one EVALSHA (RedisRateLimiter coalesces them; on Redis Cluster one batch per hash slot). Each
permit is decided on its own, in order, exactly as if it had been its own call: permits naming the
same key see each other's effect (a working copy of the state), an allowed one takes its permits, a
denied one takes nothing, and each key that changed is written once at the end.

KEYS        one key per decision, as for the other scripts (see common.lua)
ARGV        now and the least expiry as for the other scripts, then the distinct sets of nine fields the
            decisions use (most batches: one), then two strings of one character per decision: whether
            it shares its key with another decision of the batch, and which field set is its own
Reply:      { now_us, then per decision: allowed (1/0), r1, r2, r3 } as for run.lua, except that a
            decision whose key holds another Redis type reports -1 and one whose key holds a value Sluice
            did not write reports -2 (then r1..r3 are 0): that one decision fails, the others stand.
            A decision whose gcra value was written under other numbers reports -3 and the value (r1), one
            whose key an earlier decision of the batch read under other numbers of the same name reports
            -4: nothing is decided for either, and the caller decides each again on its own.
]]
local n = #KEYS
-- one character per decision: '1' when another decision of the batch names the same key (it takes the
-- working-copy path), '0' when it is the key's only one (decided and written at once)
local shared = ARGV[#ARGV - 1]
-- one character per decision: its field set, '0' for the first (ARGV[3..11]), '1' for the next, ...
local sets = ARGV[#ARGV]
local out = { now_us }
local w1, w2, w3, seen, dirty, order, wn = {}, {}, {}, {}, {}, {}, {}
for i = 1, n do
  local key = KEYS[i]
  local base = 2 + (string.byte(sets, i) - 48) * STRIDE
  local algo = ALGOS[ARGV[base + 1]]
  local alone = string.byte(shared, i) == 48
  local loaded, s1, s2, s3, changed = true, nil, nil, nil, false
  local again = 0
  if seen[key] then
    if wn[key] == numbers_of(base) then
      s1, s2, s3 = w1[key], w2[key], w3[key]
    else
      again = -4
    end
  else
    loaded, s1, s2, s3, changed = pcall(algo[1], key, i, base)
    if loaded and s1 == nil then
      again = -3
    elseif loaded and not alone then
      seen[key] = true
      wn[key] = numbers_of(base)
      w1[key], w2[key], w3[key] = s1, s2, s3
      if changed then
        -- read under other numbers: written even if every decision on it is denied
        order[#order + 1] = key
        dirty[key] = base
      end
    end
  end
  if again ~= 0 then
    out[#out + 1] = again
    out[#out + 1] = again == -3 and s2 or 0
    out[#out + 1] = 0
    out[#out + 1] = 0
  elseif not loaded then
    local err = tostring(s1)
    local code
    if string.find(err, '^SLUICEWRONGTYPE ') then code = -1
    elseif string.find(err, '^SLUICECORRUPT ') then code = -2
    else error(err, 0) end
    out[#out + 1] = code
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
  else
    local ok, r1, r2, r3, a1, a2, a3 = algo[2](s1, s2, s3, base)
    if alone and changed and not ok then
      algo[3](key, a1, a2, a3, base)
    elseif ok then
      if alone then
        algo[3](key, a1, a2, a3, base)
      else
        w1[key], w2[key], w3[key] = a1, a2, a3
        if not dirty[key] then order[#order + 1] = key end
        dirty[key] = base
      end
    end
    out[#out + 1] = ok and 1 or 0
    out[#out + 1] = r1
    out[#out + 1] = r2
    out[#out + 1] = r3
  end
end
for j = 1, #order do
  local key = order[j]
  local base = dirty[key]
  ALGOS[ARGV[base + 1]][3](key, w1[key], w2[key], w3[key], base)
end
return out
