--[[
GCRA, which is also Sluice's token bucket (see dev.sluice.algorithm.Gcra).

State: the theoretical arrival time TAT (the instant the bucket is full again), stored as the string
"tat_us:frac": TAT = tat_us microseconds plus frac units of 1/timeScale ns (0 <= frac < K, where
K = 1000 * timeScale is the number of units in a microsecond). The backlog at now is
B = max(0, TAT - now) = (tat_us - now_us) * K + frac units, kept as the pair (b_us, b_frac).

With P = intervalScaled (the emission interval T in units), CP = capacityScaled (C*T) and cost q:
    allowed  iff  B + q*P <= CP          then  TAT' = now + B + q*P
A denied call writes nothing. reserve passes CP + maxWait as the bound instead of CP. q*P and the
bound arrive as (microseconds, units) pairs computed exactly in Java, so the script only adds and
compares pairs whose parts stay below 2^53.
Expiry (SET ... PX): the time until TAT, rounded up to the millisecond; then the key equals a fresh one.

Named: "tat_us:frac/numbers". Under other numbers (Inheritance.tat) what was spent carries over: the
backlog B in the old units becomes ceil(B*P'/P) in the new, a product of up to 124 bits. So the
script does not convert: load reports the stored value (nil, value) and the caller converts it in
Java and calls again with that value and its replacement (fields 8 and 9); the script reads the
replacement only if the key still holds exactly that value, else it reports the new value again.

Fields (after the code 'g'):  qp_us, qp_frac, bound_us, bound_frac, K
State reported:               b_us, b_frac, 0   (the backlog the permit saw)
]]
local function g_load(key, i, base)
  local v = get_string(key, i)
  if not v then return 0, 0, 0 end
  local numbers = numbers_of(base)
  local s, was = split_numbers(v, i, numbers)
  local changed = false
  if was ~= numbers then
    if v ~= ARGV[base + 8] then return nil, v end
    s = string.match(ARGV[base + 9], '^([^/]*)/')
    changed = true
  end
  local a, b = string.match(s, '^(%d+):(%d+)$')
  if a == nil then error('SLUICECORRUPT ' .. i, 0) end
  local tat_us, frac = tonumber(a), tonumber(b)
  if tat_us > now_us then return tat_us - now_us, frac, 0, changed end
  if tat_us == now_us then return 0, frac, 0, changed end
  return 0, 0, 0, changed
end

local function g_try(b_us, b_frac, _, base)
  local k = tonumber(ARGV[base + 6])
  local us = b_us + tonumber(ARGV[base + 2])
  local frac = b_frac + tonumber(ARGV[base + 3])
  if frac >= k then
    frac = frac - k
    us = us + 1
  end
  local bound_us = tonumber(ARGV[base + 4])
  local ok = us < bound_us or (us == bound_us and frac <= tonumber(ARGV[base + 5]))
  if ok then return true, b_us, b_frac, 0, us, frac, 0 end
  return false, b_us, b_frac, 0, b_us, b_frac, 0
end

local function g_save(key, b_us, b_frac, _, base)
  local us = b_us
  if b_frac > 0 then us = us + 1 end
  local v = string.format('%d:%d', now_us + b_us, b_frac) .. numbers_suffix(base)
  redis.call('SET', key, v, 'PX', ttl(ceil_div(us, 1000)))
end

ALGOS['g'] = { g_load, g_try, g_save }
