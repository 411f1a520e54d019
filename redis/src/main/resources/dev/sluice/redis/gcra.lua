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

Fields (after the code 'g'):  qp_us, qp_frac, bound_us, bound_frac, K
State reported:               b_us, b_frac, 0   (the backlog the permit saw)
]]
local function g_load(key, i)
  local v = get_string(key, i)
  if not v then return 0, 0, 0 end
  local a, b = string.match(v, '^(%d+):(%d+)$')
  if a == nil then error('SLUICECORRUPT ' .. i, 0) end
  local tat_us, frac = tonumber(a), tonumber(b)
  if tat_us > now_us then return tat_us - now_us, frac, 0 end
  if tat_us == now_us then return 0, frac, 0 end
  return 0, 0, 0
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
  return ok, b_us, b_frac, 0, us, frac, 0
end

local function g_save(key, b_us, b_frac)
  local us = b_us
  if b_frac > 0 then us = us + 1 end
  redis.call('SET', key, string.format('%d:%d', now_us + b_us, b_frac), 'PX', ttl(ceil_div(us, 1000)))
end

ALGOS['g'] = { g_load, g_try, g_save }
