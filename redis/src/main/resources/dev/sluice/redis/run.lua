--[[
Sluice: the driver, appended after the algorithm files. Tries every permit in order against a working
copy of the state (permits naming the same key see each other's effect), then commits all of them
only if every one was allowed: a multi-permit is all or nothing, and a denied call writes nothing.
]]
local function run()
  local work, dirty, order = {}, {}, {}
  local out = { now_us, 0 }
  local all = true
  for i = 1, #KEYS do
    local key = KEYS[i]
    local base = 2 + (i - 1) * STRIDE
    local algo = ALGOS[ARGV[base + 1]]
    if algo == nil then error('SLUICEALGO ' .. i, 0) end
    local st = work[key]
    if st == nil then st = algo.load(key, i) end
    local ok, s1, s2, s3, after = algo.try(st, base)
    out[#out + 1] = ok and 1 or 0
    out[#out + 1] = s1
    out[#out + 1] = s2
    out[#out + 1] = s3
    if ok then
      if dirty[key] == nil then order[#order + 1] = key end
      work[key] = after
      dirty[key] = { algo, base }
    else
      work[key] = st
      all = false
    end
  end
  if all then
    for _, key in ipairs(order) do
      local d = dirty[key]
      d[1].save(key, work[key], d[2])
    end
    out[2] = 1
  end
  return out
end

local ok, res = pcall(run)
if not ok then
  return redis.error_reply(tostring(res))
end
return res
