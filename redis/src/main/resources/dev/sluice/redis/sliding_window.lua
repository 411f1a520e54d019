--[[
Sliding window counter (see dev.sluice.algorithm.SlidingWindow): two epoch-aligned windows, the
previous one weighted by how much of it the trailing window still covers. With k = floor(t/W) and
e = t - k*W:
    estimate = prev*(W - e)/W + curr         allowed iff estimate + q <= C
compared exactly as prev*(W - e) <= (C - curr - q)*W on base-2^21 limbs (mul_le): no floating point.

State: the string "k:prev:curr" (window number, counts of windows k-1 and k).
A denied call writes nothing.
Expiry (SET ... PX, like PEXPIRE): (k+2)*W - t, when both windows have passed, rounded up to the millisecond.

Fields (after the code 's'):  cost, C, unit (1000 when W is a whole number of microseconds, else 1),
                              W in that unit, unused
State reported:               k (-1 when fresh), prev, curr (as stored)
]]
ALGOS['s'] = {
  load = function(key, i)
    local v = get_string(key, i)
    if v == nil then return { -1, 0, 0 } end
    local k, prev, curr = parse(v, i, 3)
    return { k, prev, curr }
  end,
  try = function(st, base)
    local q = tonumber(ARGV[base + 2])
    local c = tonumber(ARGV[base + 3])
    local wn = tonumber(ARGV[base + 5])
    local k, e = window_of(wn, tonumber(ARGV[base + 4]))
    local prev, curr = 0, 0
    if st[1] == k then
      prev, curr = st[2], st[3]
    elseif st[1] == k - 1 then
      prev = st[3]
    end
    local room = c - curr - q
    local ok = room >= 0 and mul_le(prev, wn - e, room, wn)
    return ok, st[1], st[2], st[3], { k, prev, curr + q }
  end,
  save = function(key, st, base)
    local unit = tonumber(ARGV[base + 4])
    local wn = tonumber(ARGV[base + 5])
    local _, e = window_of(wn, unit)
    set_with_ttl(key, fmt(st[1]) .. ':' .. fmt(st[2]) .. ':' .. fmt(st[3]), units_to_ms(2 * wn - e, unit))
  end,
}
