--[[
Fixed window (see dev.sluice.algorithm.FixedWindow): windows of length W aligned to the Unix epoch;
window k = floor(t / W) admits while count_k + q <= C.

State: the string "k:count" (the window number and the permits it counted).
A denied call writes nothing.
Expiry (SET ... PX, like PEXPIRE): (k+1)*W - t, the end of the window, rounded up to the millisecond.

Fields (after the code 'f'):  cost, C, unit (1000 when W is a whole number of microseconds, else 1),
                              W in that unit, unused
State reported:               k (-1 when fresh), count, 0
]]
ALGOS['f'] = {
  load = function(key, i)
    local v = get_string(key, i)
    if v == nil then return { -1, 0 } end
    local k, count = parse(v, i, 2)
    return { k, count }
  end,
  try = function(st, base)
    local q = tonumber(ARGV[base + 2])
    local c = tonumber(ARGV[base + 3])
    local k = window_of(tonumber(ARGV[base + 5]), tonumber(ARGV[base + 4]))
    local count = 0
    if st[1] == k then count = st[2] end
    return count + q <= c, st[1], st[2], 0, { k, count + q }
  end,
  save = function(key, st, base)
    local unit = tonumber(ARGV[base + 4])
    local wn = tonumber(ARGV[base + 5])
    local _, e = window_of(wn, unit)
    set_with_ttl(key, fmt(st[1]) .. ':' .. fmt(st[2]), units_to_ms(wn - e, unit))
  end,
}
