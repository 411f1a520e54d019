--[[
Sluice: the driver, appended after the algorithm files. Tries every permit in order against a working
copy of the state (permits naming the same key see each other's effect), then commits all of them
only if every one was allowed: a multi-permit is all or nothing, and a denied call writes nothing.
Each algorithm gives three functions: load(key, i, base) -> state (three values); try(state, base) ->
allowed, three values to report, the state after; save(key, state after, base).
]]
local n = #KEYS
if n == 1 then
  -- one permit: no working copy needed
  local algo = ALGOS[ARGV[3]]
  local key = KEYS[1]
  local s1, s2, s3 = algo[1](key, 1, 2)
  local ok, r1, r2, r3, a1, a2, a3 = algo[2](s1, s2, s3, 2)
  if ok then
    algo[3](key, a1, a2, a3, 2)
    return { now_us, 1, 1, r1, r2, r3 }
  end
  return { now_us, 0, 0, r1, r2, r3 }
end

local out = { now_us, 0 }
local w1, w2, w3, first, order = {}, {}, {}, {}, {}
local all = true
for i = 1, n do
  local key = KEYS[i]
  local base = 2 + (i - 1) * STRIDE
  local algo = ALGOS[ARGV[base + 1]]
  local s1, s2, s3
  if first[key] then
    s1, s2, s3 = w1[key], w2[key], w3[key]
  else
    s1, s2, s3 = algo[1](key, i, base)
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
end
return out
