--[[
Sluice: the driver, appended after the algorithm files. Tries every permit in order against a working
copy of the state (permits naming the same key see each other's effect), then commits all of them
only if every one was allowed: a multi-permit is all or nothing, and a denied call writes nothing.
Each algorithm gives three functions: load(key, i, base) -> state (three values); try(state, base) ->
allowed, three values to report, the state after (as it was when denied); save(key, state after, base).
A load also says whether it read the state under other numbers (then a lone permit writes what it read
even when denied), or returns nil and the stored value for the caller to convert (gcra: see common.lua).
]]
local n = #KEYS
if n == 1 then
  -- one permit: no working copy needed
  local algo = ALGOS[ARGV[3]]
  local key = KEYS[1]
  local s1, s2, s3, changed = algo[1](key, 1, 2)
  if s1 == nil then return { now_us, -3, 1, s2 } end
  local ok, r1, r2, r3, a1, a2, a3 = algo[2](s1, s2, s3, 2)
  if ok or changed then algo[3](key, a1, a2, a3, 2) end
  if ok then return { now_us, 1, 1, r1, r2, r3 } end
  return { now_us, 0, 0, r1, r2, r3 }
end

local out = { now_us, 0 }
local w1, w2, w3, first, order, changed = {}, {}, {}, {}, {}, {}
local all = true
for i = 1, n do
  local key = KEYS[i]
  local base = 2 + (i - 1) * STRIDE
  local algo = ALGOS[ARGV[base + 1]]
  local s1, s2, s3
  if first[key] then
    s1, s2, s3 = w1[key], w2[key], w3[key]
  else
    local c
    s1, s2, s3, c = algo[1](key, i, base)
    if s1 == nil then return { now_us, -3, i, s2 } end
    if c then changed[key] = { s1, s2, s3 } end
    first[key] = base
    order[#order + 1] = key
  end
  local ok, r1, r2, r3, a1, a2, a3 = algo[2](s1, s2, s3, base)
  out[#out + 1] = ok and 1 or 0
  out[#out + 1] = r1
  out[#out + 1] = r2
  out[#out + 1] = r3
  if ok then
    w1[key], w2[key], w3[key] = a1, a2, a3
  else
    w1[key], w2[key], w3[key] = s1, s2, s3
    all = false
  end
end
if all then
  for j = 1, #order do
    local key = order[j]
    local base = first[key]
    ALGOS[ARGV[base + 1]][3](key, w1[key], w2[key], w3[key], base)
  end
  out[2] = 1
else
  -- denied: only the states read under other numbers are written, as read
  for j = 1, #order do
    local key = order[j]
    local s = changed[key]
    if s then ALGOS[ARGV[first[key] + 1]][3](key, s[1], s[2], s[3], first[key]) end
  end
end
return out
