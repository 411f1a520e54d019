--[[
Sluice: the driver for a batch, appended after every algorithm file and the operations of
estimate.lua, settle.lua and in_flight.lua (one script for all). A batch is what concurrent callers of
one limiter queued (Coalescer; on Redis Cluster one batch per hash slot), sent as one EVALSHA: each
entry is done on its own, in arrival order, exactly as if it had been its own call. An entry is one
of: 'd' a single-permit decision, 'e' a decision on an estimate (estimate.lua's e_op), 's' a settle
(settle.lua's s_op), 'i' a step of work in flight (in_flight.lua's i_op). Decisions naming the same
key see each other's effect (a working copy of the state), an allowed one takes its permits, a denied
one takes nothing, and each key that changed is written once at the end; before any other entry,
the working copy of every key it names is written and forgotten (a later decision reads it again), so
that entry sees exactly what its own call would have seen.

KEYS        per entry, in order: 'd' the state (see common.lua); 'e' and 's' the state, then the
            pending record; 'i' the slots
ARGV        now and the least expiry as for the other scripts, then the distinct sets of nine fields the
            decisions use (most batches: one), then the arguments of each other entry in order (its own
            script's ARGV[3..]: 'e' 11, 's' 14, 'i' 4), then three strings of one character per entry:
            whether a decision shares its key with another decision of the batch, which field set is a
            decision's own ('0' for another entry), and the entry's kind ('d', 'e', 's', 'i')
Reply:      { now_us, then four elements per entry }. A decision: allowed (1/0), r1, r2, r3 as for
            run.lua, except that a decision whose key holds another Redis type reports -1 and one whose
            key holds a value Sluice did not write reports -2 (then r1..r3 are 0): that one decision
            fails, the others stand. A decision whose gcra value was written under other numbers reports
            -3 and the value (r1), one whose key an earlier decision of the batch read under other numbers
            of the same name reports -4: nothing is decided for either, and the caller decides each again
            on its own. Another entry: 2 and its own script's reply (r1), or -7 and the error its own
            script would have raised (r1): that entry fails, the others stand.
]]
-- one character per entry: '1' when another decision of the batch names the same key (it takes the
-- working-copy path), '0' when it is the key's only one (decided and written at once)
local shared = ARGV[#ARGV - 2]
-- one character per entry: a decision's field set, '0' for the first (ARGV[3..11]), '1' for the next, ...
local sets = ARGV[#ARGV - 1]
-- one character per entry: its kind
local kinds = ARGV[#ARGV]
local n = #kinds
-- the other entries: their operation, how many keys and how many arguments each takes
local OPS = { e = { e_op, 2, 11 }, s = { s_op, 2, 14 }, i = { i_op, 1, 4 } }
local at = #ARGV - 3 -- where the other entries' arguments start (ARGV[at + 1])
for i = 1, n do
  local op = OPS[string.char(string.byte(kinds, i))]
  if op then at = at - op[3] end
end
local out = { now_us }
local w1, w2, w3, seen, dirty, order, wn = {}, {}, {}, {}, {}, {}, {}
local j = 0 -- the last key used
-- the working copy of key written (if changed) and forgotten: the next decision on it reads it again
local function forget(key)
  local base = dirty[key]
  if base then ALGOS[ARGV[base + 1]][3](key, w1[key], w2[key], w3[key], base) end
  dirty[key], seen[key], wn[key] = nil, nil, nil
end
for i = 1, n do
  local op = OPS[string.char(string.byte(kinds, i))]
  if op then
    local k1, k2 = KEYS[j + 1], KEYS[j + 2]
    forget(k1)
    if op[2] == 2 then forget(k2) end
    local ok, r
    if op[2] == 2 then ok, r = pcall(op[1], k1, k2, at) else ok, r = pcall(op[1], k1, at) end
    j = j + op[2]
    at = at + op[3]
    if ok then
      out[#out + 1] = 2
    else
      out[#out + 1] = -7
      if type(r) == 'table' then r = r.err end
      r = tostring(r)
    end
    out[#out + 1] = r
    out[#out + 1] = 0
    out[#out + 1] = 0
  else
    j = j + 1
    local key = KEYS[j]
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
end
for o = 1, #order do
  local key = order[o]
  local base = dirty[key]
  if base then
    -- a key forgotten by another entry is in order again only if a decision changed it after
    ALGOS[ARGV[base + 1]][3](key, w1[key], w2[key], w3[key], base)
    dirty[key] = nil
  end
end
return out
