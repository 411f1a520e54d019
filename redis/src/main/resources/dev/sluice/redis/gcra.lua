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
Expiry (SET ... PX, like PEXPIRE): the time until TAT, rounded up to the millisecond (then the key equals a fresh one).

Fields (after the code 'g'):  qp_us, qp_frac, bound_us, bound_frac, K
State reported:               b_us, b_frac, 0   (the backlog the permit saw)
]]
ALGOS['g'] = {
  load = function(key, i)
    local v = get_string(key, i)
    if v == nil then return { 0, 0 } end
    local tat_us, frac = parse(v, i, 2)
    if tat_us > now_us then return { tat_us - now_us, frac } end
    if tat_us == now_us then return { 0, frac } end
    return { 0, 0 }
  end,
  try = function(st, base)
    local k = tonumber(ARGV[base + 6])
    local us = st[1] + tonumber(ARGV[base + 2])
    local frac = st[2] + tonumber(ARGV[base + 3])
    if frac >= k then
      frac = frac - k
      us = us + 1
    end
    local bound_us = tonumber(ARGV[base + 4])
    local ok = us < bound_us or (us == bound_us and frac <= tonumber(ARGV[base + 5]))
    return ok, st[1], st[2], 0, { us, frac }
  end,
  save = function(key, st, base)
    local us = st[1]
    if st[2] > 0 then us = us + 1 end
    set_with_ttl(key, fmt(now_us + st[1]) .. ':' .. fmt(st[2]), ceil_div(us, 1000))
  end,
}
